# The ids of the sessions in the session file (a --session FILE typed on
# the line names it), for --sid: `fsview-session list --ids`.
function __fsview_session_ids
    set -l tokens (commandline -opc)
    set -l args list --ids
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --session
                if test $i -lt (count $tokens)
                    set args list --ids --session (string replace -r '^~/' ~/ -- $tokens[(math $i + 1)])
                end
            case '--session=*'
                set args list --ids --session (string replace -r '^--session=~/' ~/ -- $tokens[$i] | string replace -r '^--session=' '')
        end
    end
    fsview-session $args 2>/dev/null
end

# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_fsview_session_global_optspecs
    string join \n session= sid= agent= json q/quiet h/help V/version
end

function __fish_fsview_session_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_fsview_session_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_fsview_session_using_subcommand
    set -l cmd (__fish_fsview_session_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c fsview-session -n "__fish_fsview_session_needs_command" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_needs_command" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_needs_command" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -s V -l version -d 'Print version'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "list" -d 'List the sessions in the session file, with counts and ages'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "show" -d 'Show every view of the session and of its agents: path, kind, fresh or not, whether the conversation still holds it, when, source and lines'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "events" -d 'Show the event log of the session and of its agents, oldest first: reads, checks, builds, invalidations, with their verdicts and reasons'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "fork" -d 'Copy session --from into --sid: its views, its loaded instruction files and its memoized context'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "drop" -d 'Delete the session --sid names and everything of it, its agents\' sessions included'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "export" -d 'Write the session to stdout as one self-contained JSON document'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "import" -d 'Import a session exported by `export` from stdin, under its own id or the --sid given on the command line'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "path" -d 'Print the path of the session file the tools use here, whether or not it exists yet'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "gc" -d 'Drop kept texts no view refers to, then checkpoint and truncate the write-ahead log'
complete -c fsview-session -n "__fish_fsview_session_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -l ids -d 'Print only the session ids, one a line, nothing when there is no session file'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -l text -d 'Print the text each view showed the agent, numbered as it saw it, under a line that names the file, the kind of view, the lines, when, the source and whether the file is still that text'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -l limit -d 'Show only the latest N events' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand events" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l from -d 'The session to copy' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l replace -d 'Overwrite --sid when it exists'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand fork" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand drop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -l root -d 'Name the files below DIR relative to it [default: the top of the git work tree of the current directory]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l root -d 'Map the export\'s relative paths onto DIR [default: the top of the git work tree of the current directory]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l replace -d 'Overwrite the session when the file already has one of that id'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "list" -d 'List the sessions in the session file, with counts and ages'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "show" -d 'Show every view of the session and of its agents: path, kind, fresh or not, whether the conversation still holds it, when, source and lines'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "events" -d 'Show the event log of the session and of its agents, oldest first: reads, checks, builds, invalidations, with their verdicts and reasons'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "fork" -d 'Copy session --from into --sid: its views, its loaded instruction files and its memoized context'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "drop" -d 'Delete the session --sid names and everything of it, its agents\' sessions included'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "export" -d 'Write the session to stdout as one self-contained JSON document'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "import" -d 'Import a session exported by `export` from stdin, under its own id or the --sid given on the command line'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "path" -d 'Print the path of the session file the tools use here, whether or not it exists yet'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "gc" -d 'Drop kept texts no view refers to, then checkpoint and truncate the write-ahead log'
complete -c fsview-session -n "__fish_fsview_session_using_subcommand help; and not __fish_seen_subcommand_from list show events fork drop export import path gc help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-session -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
