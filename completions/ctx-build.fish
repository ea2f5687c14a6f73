complete -c ctx-build -l for -d 'Files the agent is about to work on: also return their nested instruction files and matching conditional rules not given yet' -r -F
complete -c ctx-build -l also -d 'Another instruction file name to read in every directory, after CLAUDE.md (repeatable; replaces FSVIEW_INSTRUCTION_NAMES)' -r
complete -c ctx-build -l memory -d 'The auto-memory index (MEMORY.md), injected last, truncated at 200 lines or 25,000 characters' -r -F
complete -c ctx-build -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c ctx-build -l sid -d 'The session (conversation) within the file; `S/A` names agent A\'s views in conversation S, as `--sid S --agent A` does' -r
complete -c ctx-build -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c ctx-build -l allow-external-imports -d 'Let @imports reach files outside the project (the git work tree, else the working directory)'
complete -c ctx-build -l no-cache -d 'Build from disk now, ignoring the memo; store and record nothing'
complete -c ctx-build -l json -d 'Write JSON Lines to stdout, one object per input (see fsview-json(7))'
complete -c ctx-build -s q -l quiet -d 'Print no notices on stderr (errors are still printed)'
complete -c ctx-build -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ctx-build -s V -l version -d 'Print version'
