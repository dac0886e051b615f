#!/usr/bin/env bash
# What `cmake --install` delivers besides the binaries: kubectl-aj (run by a
# real kubectl as a plugin), the man page and the bash and zsh completion,
# and that they cover every command and option `aj --help` lists.
# Usage: test-install.sh BUILD_DIR
source "$(dirname "$0")/lib.sh"
build=${1:?usage: test-install.sh BUILD_DIR}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/aj-install.XXXXXX")
trap 'rm -rf "$prefix" "$t_out"' EXIT

expect_ok "cmake --install into a fresh prefix" cmake --install "$build" --prefix "$prefix"
aj=$prefix/bin/aj
version=$("$aj" --version)
expect_ok "aj --version prints the project version" bash -c "[[ '$version' =~ ^aj\ [0-9]+\.[0-9]+\.[0-9]+ ]]"
expect_eq_() { local name=$1 want=$2 got; shift 2
  if got=$("$@" 2>"$t_out") && [[ $got == "$want" ]]; then ok "$name"
  else echo "(got '$got', want '$want')" >>"$t_out"; fail "$name"; fi; }
expect_ok "kubectl-aj is a relative link to aj" bash -c "[[ -L '$prefix/bin/kubectl-aj' && \$(readlink '$prefix/bin/kubectl-aj') == aj ]]"
expect_eq_ "kubectl-aj --version" "$version" "$prefix/bin/kubectl-aj" --version
expect_ok "the network helper is installed in libexec/aj" test -x "$prefix/libexec/aj/aj-net"
expect_ok "aj hands network commands to it" bash -c \
  "'$aj' list --kubeconfig '$prefix/none' 2>&1 | grep -q 'cannot read kubeconfig\|$prefix/none'"
expect_ok "...through the kubectl-aj link too" bash -c \
  "'$prefix/bin/kubectl-aj' list --kubeconfig '$prefix/none' 2>&1 | grep -q '$prefix/none'"
expect_ok "aj loads no network library itself" bash -c \
  "! readelf -d '$aj' | grep -E 'NEEDED.*(curl|websockets|ssl|crypto|archive)'"

# A real kubectl finds the plugin on PATH.
kubectl=${AJ_KUBECTL:-}
if [[ -z $kubectl ]]; then
  cp_bin=$(source "$repo_root/tests/controlplane/lib.sh"; cp_bin_dir "$(cp_version)")
  if [[ -x $cp_bin/kubectl ]]; then kubectl=$cp_bin/kubectl; else kubectl=$(command -v kubectl || true); fi
fi
if [[ -n $kubectl ]]; then
  expect_eq_ "kubectl aj --version runs the plugin" "$version" env PATH="$prefix/bin:$PATH" "$kubectl" aj --version
  expect_ok "kubectl plugin list shows it" bash -c "PATH='$prefix/bin':\$PATH '$kubectl' plugin list 2>/dev/null | grep -q '/kubectl-aj\$'"
  expect_ok "kubectl aj passes the arguments through" bash -c \
    "PATH='$prefix/bin':\$PATH AJ_HOME='$repo_root/examples/.azure_jobs' '$kubectl' aj template validate | grep -q 'valid'"
  expect_ok "kubectl completes the plugin's commands (kubectl_complete-aj)" bash -c \
    "PATH='$prefix/bin':\$PATH '$kubectl' __complete aj te 2>/dev/null | grep -qx template"
  expect_ok "...and its templates, without file names" bash -c \
    "out=\$(PATH='$prefix/bin':\$PATH AJ_HOME='$repo_root/examples/.azure_jobs' '$kubectl' __complete aj run -t '' 2>/dev/null) &&
     grep -qx volcano <<<\"\$out\" && grep -qx ':4' <<<\"\$out\""
  expect_ok "...and leaves the user command's files to the shell" bash -c \
    "PATH='$prefix/bin':\$PATH '$kubectl' __complete aj run -t volcano python '' 2>/dev/null | grep -qx ':0'"
else
  fail "no kubectl to run the plugin with (build the control plane: tests/controlplane/build.sh)"
fi

man1=$prefix/share/man/man1/aj.1
bashc=$prefix/share/bash-completion/completions/aj
zshc=$prefix/share/zsh/site-functions/_aj
expect_ok "the man page is installed" test -f "$man1"
expect_ok "the man page formats without warnings" bash -c "groff -man -ww -z '$man1' 2>&1 | { ! grep .; }"
expect_ok "man shows its NAME section" bash -c "MANWIDTH=80 man -l '$man1' 2>/dev/null | grep -q '^NAME' && MANWIDTH=80 man -l '$man1' 2>/dev/null | grep -q 'describe ML training jobs'"
expect_ok "bash completion is installed" test -f "$bashc"
expect_ok "zsh completion is installed" test -f "$zshc"
expect_ok "the zsh completion parses" zsh -n "$zshc"
expect_ok "compinit registers it for aj and kubectl-aj" zsh -fc "
  fpath=('$prefix/share/zsh/site-functions' \$fpath); autoload -Uz compinit; compinit -u -d '$prefix/zcompdump'
  [[ \$_comps[aj] == _aj && \$_comps[kubectl-aj] == _aj ]]"

# complete WORDS...: what the bash completion offers for the last word
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _aj; printf "%s\n" "${COMPREPLY[@]}" | sort' \
    _ "$bashc" "$@"
}
export AJ_HOME=$repo_root/examples/.azure_jobs
want_templates=$(cd "$AJ_HOME/template" && ls *.yaml | sed 's/\.yaml$//' | sort)
expect_eq_ "aj run -t <TAB> offers the templates in \$AJ_HOME/template" "$want_templates" complete_words aj run -t ""
expect_eq_ "aj template <TAB> offers the subcommands" "$(printf 'list\nshow\nvalidate')" complete_words aj template ""
expect_eq_ "aj list -o <TAB> offers wide too" "$(printf 'json\nwide\nyaml')" complete_words aj list -o ""
expect_ok "after the user command, files are completed" bash -c \
  "$(declare -f complete_words); bashc='$bashc'; cd '$repo_root' && complete_words aj run -t x python RE | grep -qx README.md"

# Every command and long option in aj's help is in the man page and both completions.
# (lines "  aj NAME<padded to 18> SUMMARY")
mapfile -t cmds < <("$aj" --help | grep -E '^  aj [a-z]' | cut -c6-23 | sed 's/ *$//')
expect_ok "aj --help lists commands" test "${#cmds[@]}" -ge 5
for c in "${cmds[@]}"; do
  expect_ok "man page documents aj $c" grep -q "^\\.SS \"aj $c\\b" "$man1"
  first=${c%% *}
  expect_ok "bash completion offers '$first'" bash -c "$(declare -f complete_words); bashc='$bashc'; complete_words aj '${first:0:2}' | grep -qx '$first'"
  expect_ok "zsh completion knows '$c'" grep -q "${c##* }" "$zshc"
  # shellcheck disable=SC2086
  mapfile -t longs < <("$aj" $c --help 2>/dev/null | grep -oE '(^|[ ,])--[a-z][a-z-]+' | sed 's/^[ ,]//' | sort -u | grep -vx -e --help)
  for o in "${longs[@]}"; do
    expect_ok "man page documents aj $c $o" grep -qF -- "${o//-/\\-}" "$man1"
    # shellcheck disable=SC2086
    expect_ok "bash completion offers aj $c $o" bash -c \
      "$(declare -f complete_words); bashc='$bashc'; complete_words aj $c -- | grep -qx -- '$o'"
    expect_ok "zsh completion offers aj $c $o" grep -qF -- "$o" "$zshc"
  done
done

# aj writes no colour or other escape sequences, on a terminal or not.
expect_ok "no escape sequences on a terminal" bash -c \
  "script -qec '\"$aj\" template list' /dev/null | { ! grep -q \$'\\x1b'; }"
expect_ok "...nor with NO_COLOR set" bash -c \
  "NO_COLOR=1 script -qec '\"$aj\" template list' /dev/null | { ! grep -q \$'\\x1b'; }"
expect_ok "...and the terminal run did print the templates" bash -c \
  "script -qec '\"$aj\" template list' /dev/null | grep -q volcano"
finish
