# bash completion for emojiart-sync. Source it, or install to
# /usr/share/bash-completion/completions/emojiart-sync
_emojiart_sync() {
    local cur prev
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    case "$prev" in
        --dir|--log-file) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --verify) COMPREPLY=($(compgen -W "structure full" -- "$cur")); return ;;
        --log-level) COMPREPLY=($(compgen -W "trace debug info notice warning error critical" -- "$cur")); return ;;
        purge) COMPREPLY=($(compgen -W "memory disk" -- "$cur")); return ;;
        --server|--interval|--max-delete|--concurrency|--memory-limit|--max-body-size|--retries|--timeout) return ;;
    esac
    case "${COMP_WORDS[1]}" in
        status) COMPREPLY=($(compgen -W "--dir --json --help" -- "$cur")) ;;
        purge) COMPREPLY=($(compgen -W "--dir --timeout --help" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "status purge --dir --server --once --interval --max-delete --concurrency --memory-limit --verify --max-body-size --retries --log-file --log-level --quiet --help --version" -- "$cur")) ;;
    esac
}
complete -F _emojiart_sync emojiart-sync
