# The ids of the sessions in the session file (a --session FILE typed on
# the line names it), for --sid: `fsview-session list --ids`.
_fsview_session_ids() {
    local i id file=""
    local -a args=(list --ids)
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --session)
                file="${COMP_WORDS[i + 1]}"
                [[ "${file}" == "=" ]] && file="${COMP_WORDS[i + 2]}"
                ;;
            --session=*)
                file="${COMP_WORDS[i]#--session=}"
                ;;
        esac
    done
    [[ "${file}" == "~/"* ]] && file="${HOME}/${file#"~/"}"
    [[ -n "${file}" ]] && args+=(--session "${file}")
    COMPREPLY=()
    while IFS= read -r id; do
        [[ -n "${id}" && "${id}" == "${cur}"* ]] && COMPREPLY+=("${id}")
    done < <(fsview-session "${args[@]}" 2>/dev/null)
}

_fsview__hook() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="fsview__hook"
                ;;
            fsview__hook,claude)
                cmd="fsview__hook__subcmd__claude"
                ;;
            fsview__hook,cline)
                cmd="fsview__hook__subcmd__cline"
                ;;
            fsview__hook,codex)
                cmd="fsview__hook__subcmd__codex"
                ;;
            fsview__hook,copilot)
                cmd="fsview__hook__subcmd__copilot"
                ;;
            fsview__hook,droid)
                cmd="fsview__hook__subcmd__droid"
                ;;
            fsview__hook,gemini)
                cmd="fsview__hook__subcmd__gemini"
                ;;
            fsview__hook,help)
                cmd="fsview__hook__subcmd__help"
                ;;
            fsview__hook,install)
                cmd="fsview__hook__subcmd__install"
                ;;
            fsview__hook,kilo)
                cmd="fsview__hook__subcmd__kilo"
                ;;
            fsview__hook,opencode)
                cmd="fsview__hook__subcmd__opencode"
                ;;
            fsview__hook,pi)
                cmd="fsview__hook__subcmd__pi"
                ;;
            fsview__hook,qwen)
                cmd="fsview__hook__subcmd__qwen"
                ;;
            fsview__hook__subcmd__help,claude)
                cmd="fsview__hook__subcmd__help__subcmd__claude"
                ;;
            fsview__hook__subcmd__help,cline)
                cmd="fsview__hook__subcmd__help__subcmd__cline"
                ;;
            fsview__hook__subcmd__help,codex)
                cmd="fsview__hook__subcmd__help__subcmd__codex"
                ;;
            fsview__hook__subcmd__help,copilot)
                cmd="fsview__hook__subcmd__help__subcmd__copilot"
                ;;
            fsview__hook__subcmd__help,droid)
                cmd="fsview__hook__subcmd__help__subcmd__droid"
                ;;
            fsview__hook__subcmd__help,gemini)
                cmd="fsview__hook__subcmd__help__subcmd__gemini"
                ;;
            fsview__hook__subcmd__help,help)
                cmd="fsview__hook__subcmd__help__subcmd__help"
                ;;
            fsview__hook__subcmd__help,install)
                cmd="fsview__hook__subcmd__help__subcmd__install"
                ;;
            fsview__hook__subcmd__help,kilo)
                cmd="fsview__hook__subcmd__help__subcmd__kilo"
                ;;
            fsview__hook__subcmd__help,opencode)
                cmd="fsview__hook__subcmd__help__subcmd__opencode"
                ;;
            fsview__hook__subcmd__help,pi)
                cmd="fsview__hook__subcmd__help__subcmd__pi"
                ;;
            fsview__hook__subcmd__help,qwen)
                cmd="fsview__hook__subcmd__help__subcmd__qwen"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        fsview__hook)
            opts="-h -V --help --version claude gemini codex qwen opencode kilo pi copilot droid cline install help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__claude)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__cline)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__codex)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__copilot)
            opts="-h --event --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --event)
                    COMPREPLY=($(compgen -W "preToolUse postToolUse userPromptSubmitted preCompact" -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__droid)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__gemini)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help)
            opts="claude gemini codex qwen opencode kilo pi copilot droid cline install help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__claude)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__cline)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__codex)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__copilot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__droid)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__gemini)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__kilo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__opencode)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__pi)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__help__subcmd__qwen)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__install)
            opts="-q -h --project --local --user --uninstall --also --short-reads --give-back --on-change --json --quiet --help claude gemini codex qwen opencode copilot droid kilo pi cline"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__kilo)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__opencode)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__pi)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fsview__hook__subcmd__qwen)
            opts="-h --session --sid --on-error --gate --allow --also --diff-lines --total-diff-lines --short-reads --give-back --on-change --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sid)
                    _fsview_session_ids
                    return 0
                    ;;
                --on-error)
                    COMPREPLY=($(compgen -W "open closed" -- "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --total-diff-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --short-reads)
                    COMPREPLY=($(compgen -W "on off auto" -- "${cur}"))
                    return 0
                    ;;
                --give-back)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --on-change)
                    COMPREPLY=($(compgen -W "merge refuse" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _fsview__hook -o nosort -o bashdefault -o default fsview-hook
else
    complete -F _fsview__hook -o bashdefault -o default fsview-hook
fi
