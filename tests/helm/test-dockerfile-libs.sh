#!/usr/bin/env bash
# The Dockerfile's runtime stage installs every shared library the binaries
# load. No container engine is needed: the binaries built here are linked
# against this machine's Debian packages, which are the Dockerfile's.
#
# Usage: test-dockerfile-libs.sh DOCKERFILE BINARY...
# Every library a binary names itself (DT_NEEDED) must come from a package
# listed in the runtime stage's apt-get install, or from a package every
# Debian image has (essential or required, and their dependencies, such as libc6). Every other library
# ldd reports must come from a dependency of those packages.
set -uo pipefail
dockerfile=$1; shift
source "$(dirname "$0")/../lib/expect.sh"

# The runtime stage: from the last FROM on. Its apt-get install arguments,
# continuation lines joined, options and shell operators dropped.
runtime_pkgs=$(awk '/^FROM /{buf=""} {buf = buf "\n" $0} END{print buf}' "$dockerfile" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
  grep -E '^(RUN )?.*apt-get install' |
  sed -e 's/.*apt-get install//' -e 's/&&.*//' | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | sort -u)
if [[ -z $runtime_pkgs ]]; then
  fail "found no apt-get install in the runtime stage of $dockerfile"; exit 1
fi
if grep -q -- '-dev$' <<<"$runtime_pkgs"; then
  fail "the runtime stage installs -dev packages: $(grep -- '-dev$' <<<"$runtime_pkgs" | tr '\n' ' ')"
else
  ok "the runtime stage installs no -dev packages"
fi
if awk '/^FROM /{n++} END{exit !(n >= 2)}' "$dockerfile"; then ok "the Dockerfile is multi-stage"
else fail "the Dockerfile is multi-stage"; fi
runtime=$(awk '/^FROM /{buf=""} {buf = buf $0 "\n"} END{printf "%s", buf}' "$dockerfile")
user=$(sed -n 's/^USER \([^:]*\).*/\1/p' <<<"$runtime" | tail -n 1)
if [[ $user =~ ^[0-9]+$ && $user != 0 ]]; then ok "the runtime stage runs as a numeric non-root user ($user)"
else fail "the runtime stage runs as a numeric non-root user (USER is '$user')"; fi
if grep -qE '^ENTRYPOINT \["[^"]*/aj-controller"' <<<"$runtime"; then ok "the entrypoint is aj-controller"
else fail "the entrypoint is aj-controller"; fi

# The package that ships a library file, in $pkg (dpkg -S on the resolved path and,
# for /lib -> /usr/lib merged systems, the other spelling).
declare -A pkg_cache=()
package_of() {
  local p=$1 real alt out
  if [[ -n ${pkg_cache[$p]:-} ]]; then pkg=${pkg_cache[$p]}; return 0; fi
  real=$(readlink -f "$p")
  for cand in "$p" "$real" "${p/#\/usr\/lib/\/lib}" "${real/#\/usr\/lib/\/lib}" "${p/#\/lib/\/usr\/lib}" "${real/#\/lib/\/usr\/lib}"; do
    if out=$(dpkg -S "$cand" 2>/dev/null); then
      alt=${out%%:*}     # "libfoo1:amd64: /path" -> "libfoo1"
      pkg=${alt%%,*}
      pkg_cache[$p]=$pkg
      return 0
    fi
  done
  return 1
}

# Packages in every Debian image: the essential and required ones and what
# they depend on (libc6 is only "optional", but every essential package needs it).
declare -A depends=()
while IFS=$'\t' read -r p d; do depends[$p]=$d; done \
  < <(dpkg-query -W -f '${Package}\t${Depends}, ${Pre-Depends}\n')
closure() {
  local -A seen=()
  local queue=("$@") p d
  while ((${#queue[@]})); do
    p=${queue[0]}; queue=("${queue[@]:1}")
    [[ -n ${seen[$p]:-} ]] && continue
    seen[$p]=1
    # "a (>= 1), b | c" -> a b c (every alternative: any may be the one installed)
    for d in $(tr ',|' '\n\n' <<<"${depends[$p]:-}" | sed -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g'); do
      [[ -n $d && -z ${seen[$d]:-} ]] && queue+=("$d")
    done
  done
  printf '%s\n' "${!seen[@]}" | sort -u
}
base=$(closure $(dpkg-query -W -f '${Package} ${Essential} ${Priority}\n' |
  awk '$2=="yes" || $3=="required" {print $1}'))
reachable=$(closure $runtime_pkgs $base)

for bin in "$@"; do
  name=$(basename "$bin")
  if [[ ! -x $bin ]]; then fail "$name: not found at $bin"; continue; fi
  needed=$(objdump -p "$bin" | awk '$1=="NEEDED"{print $2}')
  while read -r soname path; do
    [[ -z $soname ]] && continue
    if [[ $path == "not" || -z $path ]]; then fail "$name: $soname is not found by ldd"; continue; fi
    package_of "$path" || { fail "$name: no Debian package ships $path"; continue; }
    if grep -qxF "$soname" <<<"$needed"; then
      if grep -qxF "$pkg" <<<"$runtime_pkgs"; then ok "$name: $soname from $pkg, listed in the runtime stage"
      elif grep -qxF "$pkg" <<<"$base"; then ok "$name: $soname from $pkg, in every Debian image"
      else fail "$name: $soname comes from $pkg, which the runtime stage does not install"; fi
    elif grep -qxF "$pkg" <<<"$reachable"; then
      ok "$name: $soname (indirect) from $pkg, a dependency of the listed packages"
    else
      fail "$name: $soname (indirect) comes from $pkg, which nothing in the runtime stage pulls in"
    fi
  done < <(ldd "$bin" | awk '$2=="=>"{print $1, $3} $2!="=>" && $1 ~ /^\//{next}')
done
finish
