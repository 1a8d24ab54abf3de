#!/usr/bin/env bash
# CPU seconds (user + sys) that nvcc takes on each CUDA source of the plugin, with the flags of a
# configured build (its flags.make: architectures, -O2 -g, warnings as errors), one line per file
# and the total. CPU time rather than wall time, so that a loaded machine skews it less; compare
# trees in interleaved rounds, and say the load.
#
#   bash scripts/cuda_build_time.sh [BUILD_DIR] [FILE.cu...]   # default: build, the pointwise files
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(unary.cu binary.cu elementwise.cu)
fi
flags_file="$build/plugins/cuda/CMakeFiles/kiln_cuda.dir/flags.make"
if [ ! -f "$flags_file" ]; then
  echo "cuda_build_time: no $flags_file (configure with CUDA)" >&2
  exit 1
fi
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
# the flags as make's shell reads them (the defines quote a string)
eval "args=($(sed -n 's/^CUDA_DEFINES = //p' "$flags_file") \
            $(sed -n 's/^CUDA_FLAGS = //p' "$flags_file"))"
includes="$build/plugins/cuda/CMakeFiles/kiln_cuda.dir/includes_CUDA.rsp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total=0
for f in "${files[@]}"; do
  # -forward-unknown-to-host-compiler: as CMake's rule passes it (for -Wall and the like)
  /usr/bin/time -f "%U %S" -o "$out/time" "$nvcc" -forward-unknown-to-host-compiler \
    "${args[@]}" --options-file "$includes" -x cu -c "plugins/cuda/$f" -o "$out/obj.o"
  seconds=$(awk '{printf "%.1f", $1 + $2}' "$out/time")
  total=$(awk -v a="$total" -v b="$seconds" 'BEGIN {printf "%.1f", a + b}')
  echo "$f $seconds"
done
echo "total $total (load $(cut -d' ' -f1-3 /proc/loadavg))"
