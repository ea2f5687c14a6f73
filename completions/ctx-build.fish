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

complete -c ctx-build -l for -d 'Files the agent is about to work on: also return their nested instruction files and matching conditional rules not given yet' -r -F
complete -c ctx-build -l origin -d 'Where in the conversation the --for files are attached: their views hold as long as that does, released at a compaction or rewind that drops it' -r
complete -c ctx-build -l also -d 'Another instruction file name to read in every directory, after CLAUDE.md' -r
complete -c ctx-build -l layout -d 'Lay the context out as this Claude Code version did: 2.1.332 or 2.1.88' -r -f -a "2.1.332\t''
2.1.88\t''"
complete -c ctx-build -l memory -d 'The auto-memory index, injected last, truncated at 200 lines or 25,000 characters' -r -F
complete -c ctx-build -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c ctx-build -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c ctx-build -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c ctx-build -l allow-external-imports -d 'Let @imports of project, local and managed files reach files outside the working directory'
complete -c ctx-build -l no-cache -d 'Build from disk now, ignoring the memo'
complete -c ctx-build -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c ctx-build -s q -l quiet -d 'Print no notices on stderr'
complete -c ctx-build -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ctx-build -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c ctx-build -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
