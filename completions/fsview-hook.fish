complete -c fsview-hook -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r
complete -c fsview-hook -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for PreToolUse, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'PreToolUse: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -l read-lines -d 'Lines Claude Code\'s Read shows when given no limit' -r
complete -c fsview-hook -l diff-lines -d 'UserPromptSubmit: most diff lines shown per file' -r
complete -c fsview-hook -l total-diff-lines -d 'UserPromptSubmit: most diff lines shown in all' -r
complete -c fsview-hook -l allow -d 'Answer permissionDecision "allow" when the gate lets a change through (skipping Claude Code\'s permission prompt), instead of no opinion'
complete -c fsview-hook -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -s V -l version -d 'Print version'
