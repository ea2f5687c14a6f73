complete -c fsview-check-edit -l diff-lines -d 'With --changed: most diff lines shown per file' -r
complete -c fsview-check-edit -l total-diff-lines -d 'With --changed: most diff lines shown in all' -r
complete -c fsview-check-edit -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-check-edit -l sid -d 'The session within the file' -r
complete -c fsview-check-edit -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-check-edit -s w -l write -d 'Ask about replacing the whole file, not a targeted edit'
complete -c fsview-check-edit -s 0 -l null -d 'Paths on stdin are separated by NUL bytes, as from `git diff -z`'
complete -c fsview-check-edit -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "write": true}'
complete -c fsview-check-edit -l changed -d 'List every file of the session whose views are no longer fresh, with a unified diff of what changed'
complete -c fsview-check-edit -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-check-edit -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-check-edit -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-check-edit -s V -l version -d 'Print version'
