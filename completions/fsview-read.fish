complete -c fsview-read -s o -l offset -d 'First line to show, 1-based' -r
complete -c fsview-read -s n -l limit -d 'Number of lines to show' -r
complete -c fsview-read -l cap -d 'Most bytes of a file to show' -r
complete -c fsview-read -l content -d 'With --written: the text the agent wrote' -r -F
complete -c fsview-read -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-read -l sid -d 'The session within the file' -r
complete -c fsview-read -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-read -l stub -d 'When this conversation was shown the same view of the same content before, print a short stub instead of the content'
complete -c fsview-read -l written -d 'Record the agent\'s own write of each PATH as a `full` view, printing nothing, so its next edit needs no re-read'
complete -c fsview-read -l processed -d 'Record the text on stdin as a `processed` view of PATH, printing nothing'
complete -c fsview-read -l requests -d 'Read requests as JSON Lines on stdin: {"path": "a.rs", "offset": 10, "limit": 5}'
complete -c fsview-read -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-read -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-read -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-read -s V -l version -d 'Print version'
