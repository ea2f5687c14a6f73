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

complete -c fsview-write -l content -d 'Read the new content from FILE instead of stdin' -r -F
complete -c fsview-write -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-write -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-write -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-write -s n -l dry-run -d 'Decide and print the diff, but write nothing and record no view'
complete -c fsview-write -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "content": "..."}'
complete -c fsview-write -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-write -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-write -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-write -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-write -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
