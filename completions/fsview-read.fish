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

complete -c fsview-read -s o -l offset -d 'First line to show, 1-based' -r
complete -c fsview-read -s n -l limit -d 'Number of lines to show' -r
complete -c fsview-read -l cap -d 'Most bytes of a file to show' -r
complete -c fsview-read -l content -d 'With --written: the text the agent wrote' -r -F
complete -c fsview-read -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-read -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-read -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-read -l stub -d 'When this conversation was shown the same view of the same content before, print a short stub instead of the content'
complete -c fsview-read -l written -d 'Record the agent\'s own write of each PATH as a `full` view, printing nothing, so its next edit needs no re-read'
complete -c fsview-read -l processed -d 'Record the text on stdin as a `processed` view of PATH, printing nothing'
complete -c fsview-read -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "offset": 10, "limit": 5}'
complete -c fsview-read -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-read -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-read -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-read -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-read -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
