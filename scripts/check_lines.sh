#!/usr/bin/env bash
# Fails naming each non-test source file over 600 lines (KILN_MAX_LINES to change the limit), so
# that files stay readable in one sitting: split a file that grows past it by family or by job.
# Sources are C, C++, CUDA, CMake, Python and shell files; non-test means not under tests/, where
# case tables and scenario lists may run long. examples/, bench/ and sdk/examples/ are held to the
# limit: they are the code users read first and copy from. With no arguments it checks every
# tracked file (git ls-files); with arguments, those files (whatever their path).
set -euo pipefail
cd "$(dirname "$0")/.."
max="${KILN_MAX_LINES:-600}"

files=()
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -d '' files < <(git ls-files -z -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' \
                            '*.cmake' '*CMakeLists.txt' '*.py' '*.sh' ':!tests/')
fi

long=0
for f in "${files[@]}"; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$max" ]; then
    echo "check_lines: $f has $n lines, over the limit of $max: split it (by family or job)"
    long=$((long + 1))
  fi
done
if [ "$long" -gt 0 ]; then
  echo "check_lines: $long of ${#files[@]} files over $max lines"
  exit 1
fi
echo "check_lines: ${#files[@]} non-test source files, none over $max lines"
