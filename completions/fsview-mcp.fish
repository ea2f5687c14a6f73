complete -c fsview-mcp -s C -l dir -d 'Take relative paths from DIR, look for the default session file there, and give DIR\'s instruction files [default: the working directory]' -r -F
complete -c fsview-mcp -l cap -d 'Most bytes of a file one read shows' -r
complete -c fsview-mcp -l also -d 'Another instruction file name `context` reads in every directory, after CLAUDE.md, as ctx-build --also' -r
complete -c fsview-mcp -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-mcp -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-mcp -l sid -d 'The session within the file' -r
complete -c fsview-mcp -l stub -d 'Answer a re-read of an unchanged file, already shown to this session, with a short stub instead of its text'
complete -c fsview-mcp -l no-news -d 'Do not add the files changed since the model saw them to tool results'
complete -c fsview-mcp -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-mcp -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-mcp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-mcp -s V -l version -d 'Print version'
