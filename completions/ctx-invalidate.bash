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

_ctx__invalidate() {
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
                cmd="ctx__invalidate"
                ;;
            ctx__invalidate,help)
                cmd="ctx__invalidate__subcmd__help"
                ;;
            ctx__invalidate,install-hooks)
                cmd="ctx__invalidate__subcmd__install__subcmd__hooks"
                ;;
            ctx__invalidate__subcmd__help,help)
                cmd="ctx__invalidate__subcmd__help__subcmd__help"
                ;;
            ctx__invalidate__subcmd__help,install-hooks)
                cmd="ctx__invalidate__subcmd__help__subcmd__install__subcmd__hooks"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        ctx__invalidate)
            opts="-0 -q -h -V --system --user --reason --injection --forget --null --reset --all-sessions --hook --session --sid --agent --json --quiet --help --version install-hooks help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --reason)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --injection)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --forget)
                    COMPREPLY=($(compgen -f "${cur}"))
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
                --agent)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        ctx__invalidate__subcmd__help)
            opts="install-hooks help"
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
        ctx__invalidate__subcmd__help__subcmd__help)
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
        ctx__invalidate__subcmd__help__subcmd__install__subcmd__hooks)
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
        ctx__invalidate__subcmd__install__subcmd__hooks)
            opts="-q -h --uninstall --session --sid --agent --json --quiet --help"
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
                --agent)
                    COMPREPLY=($(compgen -f "${cur}"))
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
    complete -F _ctx__invalidate -o nosort -o bashdefault -o default ctx-invalidate
else
    complete -F _ctx__invalidate -o bashdefault -o default ctx-invalidate
fi
