#!/usr/bin/env bash
# Checks that C, C++ and CUDA sources are formatted as .clang-format says (clang-format 14, which
# scripts/setup.sh installs). With no arguments it checks every tracked source (git ls-files);
# with arguments, those files. Prints each file that differs and the command that fixes it, and
# exits 1 when there is one. Every source is kiln's own: nothing is vendored or generated, so
# nothing is left out.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
clang_format="${CLANG_FORMAT:-clang-format-14}"

if ! command -v "$clang_format" >/dev/null; then
  echo "check_format: $clang_format not found: run scripts/setup.sh (it installs clang-format-14)" \
       "or set CLANG_FORMAT to a clang-format 14" >&2
  exit 2
fi

files=()
if [ $# -gt 0 ]; then
  files=("$@")
else
  cd "$root"
  mapfile -d '' files < <(git ls-files -z -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
fi
[ ${#files[@]} -gt 0 ] || { echo "check_format: no files to check" >&2; exit 2; }

# One clang-format per batch of files; it reports every file, not only the first that differs.
report="$(printf '%s\0' "${files[@]}" |
  xargs -0 -n 50 "$clang_format" --style="file:$root/.clang-format" --dry-run -Werror 2>&1)" ||
  status=$?
if [ "${status:-0}" -eq 0 ]; then
  echo "check_format: ${#files[@]} files formatted as .clang-format says"
  exit 0
fi
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
                     <<< "$report" | sort -u)
if [ ${#bad[@]} -eq 0 ]; then  # clang-format failed for another reason (a bad .clang-format?)
  echo "check_format: $clang_format failed:" >&2
  echo "$report" >&2
  exit 2
fi
echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says:"
printf '  %s\n' "${bad[@]}"
echo "Fix them (from the repository root) with:"
if [ ${#bad[@]} -le 10 ]; then
  echo "  $clang_format -i ${bad[*]}"
else
  echo "  git ls-files -z -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' |" \
       "xargs -0 $clang_format -i"
fi
exit 1
