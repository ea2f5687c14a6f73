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

# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_fsview_hook_global_optspecs
    string join \n h/help V/version
end

function __fish_fsview_hook_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_fsview_hook_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_fsview_hook_using_subcommand
    set -l cmd (__fish_fsview_hook_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -s V -l version -d 'Print version'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "claude" -d 'Answer one Claude Code hook payload'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "gemini" -d 'Answer one gemini-cli hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "codex" -d 'Answer one Codex hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "qwen" -d 'Answer one Qwen Code hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "opencode" -d 'Answer what fsview\'s opencode plugin sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "kilo" -d 'Answer what fsview\'s Kilo Code CLI plugin sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "pi" -d 'Answer what fsview\'s pi extension sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "copilot" -d 'Answer one GitHub Copilot CLI hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "droid" -d 'Answer one Factory Droid hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "cline" -d 'Answer one Cline CLI hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "install" -d 'Wire fsview-hook into an agent\'s settings, by its absolute path'
complete -c fsview-hook -n "__fish_fsview_hook_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand claude" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand gemini" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand codex" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand qwen" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand opencode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand kilo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand pi" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l event -d 'The hook event the payload is [default: told by its fields]' -r -f -a "preToolUse\t''
postToolUse\t''
userPromptSubmitted\t''
preCompact\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand copilot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand droid" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l session -d 'The session file [default: fsview/session.db in the git directory of the payload\'s cwd, else $XDG_STATE_HOME/fsview/session.db]' -r -F
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l sid -d 'The fsview session to use instead of the payload\'s session_id' -r -f -a '(__fsview_session_ids)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l on-error -d 'Fail open or closed on a payload that cannot be answered or a failure [default: closed for the gate, open for the rest]' -r -f -a "open\t'Exit 0 with no answer: the agent goes on as if there were no hook'
closed\t'The gate: deny, naming the problem; other events: exit 2 (a blocking error)'"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l also -d 'SessionStart: another instruction file name for ctx-build to read' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l diff-lines -d 'At a prompt: most diff lines shown per file' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l total-diff-lines -d 'At a prompt: most diff lines shown in all' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l short-reads -d 'Answer a whole re-read of a file the conversation still holds, unchanged, with a short notice instead of its text: on, off, or auto' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l give-back -d 'Give the model a small file whole where it would otherwise have to read it: a rewrite whose diff --diff-lines would cut is told by its whole text when that is shorter, and a refusal carries the file when its change cannot be told whole or a compaction or rewind dropped it from the conversation' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l on-change -d 'A targeted edit of a file that changed since the agent read it: merge, when the edit is 3 or more lines from every line the change touched, applies it to the file as it is and tells the model the change with it' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l gate -d 'This hook answers the agent\'s event before a change: a payload that cannot be read at all is refused, as the gate refuses a change it cannot check'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -l allow -d 'Approve the changes the gate lets through, skipping the agent\'s own permission prompt, instead of no opinion'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand cline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l also -d 'Have each hook pass --also NAME' -r
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l short-reads -d 'Have each hook pass --short-reads WHEN' -r -f -a "on\t''
off\t''
auto\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l give-back -d 'Have each hook pass --give-back WHEN' -r -f -a "on\t''
off\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l on-change -d 'Have each hook pass --on-change WHAT' -r -f -a "merge\t''
refuse\t''"
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l project -d 'The project\'s settings, checked in [default for every agent but claude]'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l local -d 'The project\'s settings for you only, not checked in [default for claude]'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l user -d 'Your settings for every project'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l uninstall -d 'Give back what install changed: files it made removed, files it changed restored byte for byte, or, where you changed them since, only fsview-hook\'s entries taken out'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -l json -d 'Write one JSON object to stdout saying what was done'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -s q -l quiet -d 'Print nothing when it worked'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "claude" -d 'Answer one Claude Code hook payload'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "gemini" -d 'Answer one gemini-cli hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "codex" -d 'Answer one Codex hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "qwen" -d 'Answer one Qwen Code hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "opencode" -d 'Answer what fsview\'s opencode plugin sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "kilo" -d 'Answer what fsview\'s Kilo Code CLI plugin sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "pi" -d 'Answer what fsview\'s pi extension sends (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "copilot" -d 'Answer one GitHub Copilot CLI hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "droid" -d 'Answer one Factory Droid hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "cline" -d 'Answer one Cline CLI hook payload (JSON on stdin)'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "install" -d 'Wire fsview-hook into an agent\'s settings, by its absolute path'
complete -c fsview-hook -n "__fish_fsview_hook_using_subcommand help; and not __fish_seen_subcommand_from claude gemini codex qwen opencode kilo pi copilot droid cline install help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
