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
function __fish_ctx_invalidate_global_optspecs
    string join \n system user reason= injection= forget= 0/null reset all-sessions hook session= sid= agent= json q/quiet h/help V/version
end

function __fish_ctx_invalidate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ctx_invalidate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ctx_invalidate_using_subcommand
    set -l cmd (__fish_ctx_invalidate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l reason -d 'Why, recorded in the session\'s event log' -r
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l injection -d 'Set the system-prompt injection of the next builds' -r
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l forget -d 'Forget the views of these files' -r -F
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l system -d 'Clear the system part'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l user -d 'Clear the user part'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -s 0 -l null -d 'Paths on stdin are separated by NUL bytes, as from `git diff -z`'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l reset -d 'Forget the whole session: views, memoized parts, injection and the instruction files given'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l all-sessions -d 'Act on every session in the session file, not only --sid'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l hook -d 'Running from a git hook: print nothing on stdout, never create the session file'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -s q -l quiet -d 'Print no notices on stderr'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -s V -l version -d 'Print version'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -f -a "install-hooks" -d 'Install git hooks that clear the git facts of every session of the repository'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -l uninstall -d 'Remove fsview\'s hooks and restore the hooks they chained'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -s q -l quiet -d 'Print no notices on stderr'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand install-hooks" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand help; and not __fish_seen_subcommand_from install-hooks help" -f -a "install-hooks" -d 'Install git hooks that clear the git facts of every session of the repository'
complete -c ctx-invalidate -n "__fish_ctx_invalidate_using_subcommand help; and not __fish_seen_subcommand_from install-hooks help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c ctx-invalidate -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
