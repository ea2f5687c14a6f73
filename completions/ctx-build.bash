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

_ctx__build() {
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
                cmd="ctx__build"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        ctx__build)
            opts="-q -h -V --for --origin --also --allow-external-imports --layout --no-cache --memory --session --sid --agent --json --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --for)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --origin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --also)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "2.1.332 2.1.88" -- "${cur}"))
                    return 0
                    ;;
                --memory)
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
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _ctx__build -o nosort -o bashdefault -o default ctx-build
else
    complete -F _ctx__build -o bashdefault -o default ctx-build
fi
