#!/usr/bin/env bash
# Static checks over product code (src/, controller/):
#  1. functions the project bans (unbounded or unchecked forms);
#  2. cppcheck with the suppressions in tests/cppcheck-suppressions.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files 'src/*.c' 'src/*.h' 'controller/*.c' 'controller/*.h')
status=0

banned='\b(sprintf|vsprintf|strcpy|strcat|strncpy|strncat|atoi|atol|atoll|atof|gets|strtok|tmpnam|mktemp|system|popen)[[:space:]]*\('
hits=$(grep -nE "$banned" $files | grep -vE '^\S+:[0-9]+:\s*(\*|/\*|//)')
if [ -n "$hits" ]; then
  echo "banned functions in product code:"
  echo "$hits"
  status=1
else
  echo "banned functions: none"
fi

if command -v cppcheck >/dev/null 2>&1; then
  if ! cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
      --inline-suppr --suppressions-list=tests/cppcheck-suppressions.txt \
      -I src $files; then
    status=1
  else
    echo "cppcheck: clean"
  fi
fi
exit $status
