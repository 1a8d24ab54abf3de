#!/usr/bin/env bash
# Tests the checks .ci/run makes before building (scripts/check_format.sh, check_lines.sh,
# check_no_shared.sh) on files made here: each passes a good file and fails naming a bad one.
#   bash tests/test_check_scripts.sh
set -euo pipefail
scripts="$(cd "$(dirname "$0")/../scripts" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

# expect <exit code> <text the output must contain> <command...>
expect() {
  local want="$1" text="$2" got=0 out
  shift 2
  out="$("$@" 2>&1)" || got=$?
  if [ "$got" -ne "$want" ] || [[ "$out" != *"$text"* ]]; then
    echo "FAIL: $* exited $got (expected $want) and printed:"
    echo "$out" | sed 's/^/    /'
    echo "  expected it to contain: $text"
    failures=$((failures + 1))
  fi
}

printf 'int twice(int x) { return 2 * x; }\n' > "$work/good.cpp"
printf 'int twice(int x){return 2*x;}\n' > "$work/bad.cpp"
printf '__global__ void k(float* p){p[0]=1;}\n' > "$work/bad.cu"
expect 0 "1 files formatted" bash "$scripts/check_format.sh" "$work/good.cpp"
expect 1 "$work/bad.cpp" bash "$scripts/check_format.sh" "$work/good.cpp" "$work/bad.cpp"
expect 1 "clang-format-14 -i $work/bad.cpp $work/bad.cu" \
  bash "$scripts/check_format.sh" "$work/bad.cpp" "$work/good.cpp" "$work/bad.cu"

seq 600 > "$work/at_limit.cpp"
seq 601 > "$work/over_limit.cpp"
expect 0 "none over 600 lines" bash "$scripts/check_lines.sh" "$work/at_limit.cpp"
expect 1 "$work/over_limit.cpp has 601 lines, over the limit of 600" \
  bash "$scripts/check_lines.sh" "$work/at_limit.cpp" "$work/over_limit.cpp"

printf '// See "Effective PyTorch", chapter "Numerical stability in PyTorch".\n' > "$work/cited.cpp"
# (the pointers are spelled in pieces so that check_no_shared.sh passes this file)
up=".." folder="sha""red"
printf '// notes in %s\n' "$up/$folder/seeds/000.txt" > "$work/pointer.cpp"
printf '# see the %s, gotcha 2\n' "toolchain"" notes" > "$work/pointer.cmake"
expect 0 "no tracked file points" bash "$scripts/check_no_shared.sh" "$work/cited.cpp"
expect 1 "$work/pointer.cpp:1:" \
  bash "$scripts/check_no_shared.sh" "$work/cited.cpp" "$work/pointer.cpp"
expect 1 "$work/pointer.cmake:1:" bash "$scripts/check_no_shared.sh" "$work/pointer.cmake"

if [ "$failures" -gt 0 ]; then
  echo "test_check_scripts: $failures failures"
  exit 1
fi
echo "test_check_scripts: all checks pass good files and name bad ones"
