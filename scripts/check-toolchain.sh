#!/usr/bin/env bash
# Check, before a long build, that the compilers link what the tests need: gcc with ASan + UBSan
# (the sanitizer build) and with TSan (the ThreadSanitizer build), clang with libFuzzer + ASan +
# UBSan (the fuzz targets). One line says
# what is missing and which package brings it; exit 1 then.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/t.c" <<'C'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n > 0 && d[0] == 1; }
C
printf 'int main(void) { return 0; }\n' >"$work/m.c"
check() { # what package cmd...
  local what=$1 pkg=$2
  shift 2
  if ! "$@" >"$work/log" 2>&1; then
    echo "toolchain: $what does not link ($(grep -m1 -iE 'error|cannot|undefined' "$work/log" | cut -c1-160)); install $pkg (scripts/install-deps.sh --test)" >&2
    exit 1
  fi
}
for c in cc clang; do
  command -v "$c" >/dev/null || { echo "toolchain: $c is not installed; run scripts/install-deps.sh --test" >&2; exit 1; }
done
check "cc -fsanitize=address,undefined" "gcc's libasan and libubsan (build-essential)" \
  cc -fsanitize=address,undefined "$work/m.c" -o "$work/m"
check "cc -fsanitize=thread" "gcc's libtsan (libtsan2; Debian's libgcc-12-dev depends on it)" \
  cc -fsanitize=thread "$work/m.c" -o "$work/m"
check "clang -fsanitize=fuzzer,address,undefined" "clang's compiler runtime (libclang-rt-dev)" \
  clang -fsanitize=fuzzer,address,undefined "$work/t.c" -o "$work/t"
