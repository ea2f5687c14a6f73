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

complete -c fsview-check-edit -l diff-lines -d 'With --changed: most diff lines shown per file' -r
complete -c fsview-check-edit -l total-diff-lines -d 'With --changed: most diff lines shown in all' -r
complete -c fsview-check-edit -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-check-edit -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-check-edit -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-check-edit -s w -l write -d 'Ask about replacing the whole file, not a targeted edit'
complete -c fsview-check-edit -s 0 -l null -d 'Paths on stdin are separated by NUL bytes, as from `git diff -z`'
complete -c fsview-check-edit -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "write": true}'
complete -c fsview-check-edit -l changed -d 'List every file of the session whose views are no longer fresh, with a unified diff of what changed'
complete -c fsview-check-edit -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-check-edit -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-check-edit -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-check-edit -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-check-edit -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
