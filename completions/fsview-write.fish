complete -c fsview-write -l content -d 'Read the new content from FILE instead of stdin' -r -F
complete -c fsview-write -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-write -l sid -d 'The session within the file' -r
complete -c fsview-write -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-write -s n -l dry-run -d 'Decide and print the diff, but write nothing and record no view'
complete -c fsview-write -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "content": "..."}'
complete -c fsview-write -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-write -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-write -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-write -s V -l version -d 'Print version'
