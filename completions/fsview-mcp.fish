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

complete -c fsview-mcp -s C -l dir -d 'Take relative paths from DIR, look for the default session file there, and give DIR\'s instruction files [default: the working directory]' -r -F
complete -c fsview-mcp -l cap -d 'Most a read\'s result holds: its numbered lines in bytes, each newline, tab or quote counted twice, as clients count them' -r
complete -c fsview-mcp -l on-change -d 'When a file changed since it was read: merge an edit that is 3 or more lines from the change, and tell the change with the result, or refuse every such edit [env: FSVIEW_ON_CHANGE]' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-mcp -l also -d 'Another instruction file name `context` reads in every directory, after CLAUDE.md, as ctx-build --also' -r
complete -c fsview-mcp -l session -d 'The session file [default: fsview/session.db in the git directory, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-mcp -l agent -d 'The agent of the session whose views to use: a subagent\'s id, or `main` for the main thread [default: main]' -r
complete -c fsview-mcp -l sid -d 'The session within the file' -r -f -a '(__fsview_session_ids)'
complete -c fsview-mcp -l stub -d 'Answer a re-read of an unchanged file, already shown to this session, with a short stub instead of its text'
complete -c fsview-mcp -l no-news -d 'Do not add the files changed since the model saw them to tool results'
complete -c fsview-mcp -s q -l quiet -d 'Print no notices on stderr'
complete -c fsview-mcp -l json -d 'Write JSON Lines to stdout, one object per input'
complete -c fsview-mcp -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-mcp -s V -l version -d 'Print version'

# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c fsview-mcp -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
