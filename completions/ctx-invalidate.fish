complete -c ctx-invalidate -l reason -d 'Why, recorded in the session\'s event log' -r
complete -c ctx-invalidate -l injection -d 'Set the system-prompt injection of the next builds (\'\' removes it); clears both parts' -r
complete -c ctx-invalidate -l forget -d 'Forget the views of these files (all views when none is given); `-` reads paths from stdin, one per line' -r -F
complete -c ctx-invalidate -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c ctx-invalidate -l sid -d 'The session (conversation) within the file; `S/A` names agent A\'s views in conversation S, as `--sid S --agent A` does' -r
complete -c ctx-invalidate -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c ctx-invalidate -l system -d 'Clear the system part (git facts, injection)'
complete -c ctx-invalidate -l user -d 'Clear the user part (instruction files, date)'
complete -c ctx-invalidate -s 0 -l null -d 'Paths on stdin (`-`) are separated by NUL bytes, as from `git diff -z`'
complete -c ctx-invalidate -l reset -d 'Forget the whole session: views, memoized parts, injection and the instruction files given'
complete -c ctx-invalidate -l all-sessions -d 'Act on every session in the session file, not only --sid'
complete -c ctx-invalidate -l hook -d 'Running from a git hook: print nothing on stdout, never create the session file'
complete -c ctx-invalidate -l json -d 'Write JSON Lines to stdout, one object per input (see fsview-json(7))'
complete -c ctx-invalidate -s q -l quiet -d 'Print no notices on stderr (errors are still printed)'
complete -c ctx-invalidate -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ctx-invalidate -s V -l version -d 'Print version'
