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

complete -c fsview-edit -l old -d 'Text to replace' -r
complete -c fsview-edit -l new -d 'Text to put in its place' -r
complete -c fsview-edit -l on-change -d 'When the file changed since it was read: merge an edit that is 3 or more lines from the change, or refuse every such edit [env: FSVIEW_ON_CHANGE]' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-edit -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-edit -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-edit -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-edit -s a -l all -d 'Replace every occurrence of each --old, not just a unique one'
complete -c fsview-edit -s n -l dry-run -d 'Decide and print the diff, but write nothing and record no view'
complete -c fsview-edit -l requests -d 'Read requests as JSON Lines on stdin: {"path", "old_string", "new_string", "replace_all"} or {"path", "edits": [{"old_string", "new_string", "replace_all"}, ...]}'
complete -c fsview-edit -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-edit -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-edit -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-edit -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-edit -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
