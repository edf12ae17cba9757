# bash completion for git loop: `git loop <TAB>` (through git's own completion, which
# calls _git_loop) and `git-loop <TAB>`. Written by `git loop completions bash`.
#
# The candidates come from the binary itself (`git-loop __complete -- WORD...`, the last
# word being the one completed): its commands and options as clap parses them, enum
# values, and the loop ids, vaults and sandbox profiles of the workspace. Hidden commands
# are never offered; where a path is wanted, bash completes file names.

# Sets COMPREPLY for the words after `git-loop` / `git loop` ($@, the last one being
# completed). $1 of the caller's `nospace`: candidates then carry their own space.
__git_loop_reply() {
    local nospace=$1
    shift
    local cur=${!#} out
    out=$(command git-loop __complete -- "$@" 2>/dev/null) || return 0
    COMPREPLY=()
    case $out in
    :files | :dirs)
        local kind=-f
        [ "$out" = :dirs ] && kind=-d
        compopt -o filenames +o nospace 2>/dev/null
        local IFS=$'\n'
        COMPREPLY=($(compgen "$kind" -- "$cur"))
        return 0
        ;;
    esac
    # `--net=pr`: bash replaces only what follows the `=` when `=` breaks words.
    local strip=
    if [[ $cur == --*=* && $COMP_WORDBREAKS == *=* ]]; then
        strip=${cur%%=*}=
    fi
    local line
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        line=${line#"$strip"}
        [ "$nospace" = 1 ] && line="$line "
        COMPREPLY+=("$line")
    done <<<"$out"
}

# `git loop ...`: git's completion has set words, cword and cur (`=` and `:` kept in
# words) and __git_cmd_idx, the index of `loop`.
_git_loop() {
    local first=$((${__git_cmd_idx:-1} + 1))
    local count=$((cword - first))
    ((count < 0)) && count=0
    # git registers its completion with -o nospace.
    __git_loop_reply 1 "${words[@]:first:count}" "$cur"
}

# `git-loop ...`.
__git_loop_direct() {
    local cur words cword
    if declare -F _get_comp_words_by_ref >/dev/null; then
        _get_comp_words_by_ref -n =: cur words cword
    else
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
        cur=${COMP_WORDS[COMP_CWORD]}
    fi
    __git_loop_reply 0 "${words[@]:1:cword-1}" "$cur"
}

complete -F __git_loop_direct git-loop
