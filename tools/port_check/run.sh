#!/usr/bin/env bash
# Compiles and runs PyTorch's C++ frontend tests (test/cpp/api) against kiln through aliases
# only, one case at a time, and reports how many compile and pass (docs/porting.md).
#
#   tools/port_check/run.sh <pytorch-checkout | its test/cpp/api> [kiln-build-dir]
#
# With a build dir, kiln is that build (kiln_core and kiln_cpu built) and its source tree;
# without, the installed kiln under $KILN_PREFIX (default /usr/local).
# Environment: CXX (default c++), JOBS (parallel compiles, default 2), NICE (the compiles'
# niceness, default 10), PORT_CHECK_WORK (where units, logs and report.md go; default
# <build-dir>/port_check, else ./port_check).
# Needs libgtest-dev and python3.
set -euo pipefail

usage() { sed -n '5p' "$0" | sed 's/^# *//' >&2; exit 2; }
fail() { echo "port_check: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || usage
if [ -d "$1/test/cpp/api" ]; then
  root=$(cd "$1" && pwd)
elif [ -f "$1/support.h" ] && [ -d "$1/../../../test/cpp/api" ]; then
  root=$(cd "$1/../../.." && pwd)
else
  fail "$1 is neither a PyTorch checkout nor its test/cpp/api folder"
fi
api="$root/test/cpp/api"

if [ $# -eq 2 ]; then
  build=$(cd "$2" && pwd)
  [ -f "$build/CMakeCache.txt" ] || fail "$build is not a CMake build folder of kiln"
  kiln_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  includes="-I$kiln_src/core/include -I$kiln_src/sdk/include"
  libdir="$build/lib"
  kiln="build $build"
  work=${PORT_CHECK_WORK:-$build/port_check}
else
  prefix=${KILN_PREFIX:-/usr/local}
  includes="-I$prefix/include"
  libdir="$prefix/lib"
  [ -f "$libdir/libkiln_core.so" ] || libdir="$prefix/lib64"
  kiln="installed in $prefix"
  work=${PORT_CHECK_WORK:-$PWD/port_check}
fi
[ -f "$libdir/libkiln_core.so" ] ||
  fail "no libkiln_core.so in $libdir (build kiln_core and kiln_cpu, or install kiln)"
[ -f /usr/include/gtest/gtest.h ] || fail "googletest is missing: apt-get install libgtest-dev"
command -v python3 > /dev/null || fail "python3 is missing"

cxx=${CXX:-c++}
niceness=${NICE:-10}
gtest_libs=$(pkg-config --libs gmock gtest 2> /dev/null || echo "-lgtest -pthread")
mkdir -p "$work/pch"
work=$(cd "$work" && pwd)
# -w: the logs keep errors only; -O0: most time is in kiln's library, not in the case.
flags="-std=c++20 -O0 -w -fmax-errors=40 -pthread -I$here/include -I$root $includes"

# Helpers of the test support header that need a libtorch feature exist only when kiln has it.
probe() {  # probe MACRO 'code'
  printf '#include <port_check/torch_alias.h>\n#include <string>\n%s\n' "$2" > "$work/pch/probe.cpp"
  if nice -n "$niceness" $cxx $flags -fsyntax-only "$work/pch/probe.cpp" 2> /dev/null; then
    flags="$flags -D$1"
  fi
}
probe PORT_CHECK_HAS_WARNING_HANDLER 'struct W : c10::WarningHandler {
  void process(const c10::SourceLocation&, const std::string&, bool) override {} };
void f() { c10::Warning::set_warning_handler(c10::Warning::get_warning_handler()); }'
probe PORT_CHECK_HAS_DEFAULT_DTYPE 'void f() { torch::set_default_dtype(
  torch::scalarTypeToTypeMeta(torch::typeMetaToScalarType(torch::get_default_dtype()))); }'

pch="$work/pch/port_check_pch.h"
printf '#include <port_check/test_support.h>\n' > "$pch"
echo "port_check: precompiling the alias and support headers" >&2
nice -n "$niceness" $cxx $flags -x c++-header "$pch" -o "$pch.gch"
nice -n "$niceness" $cxx $flags -c "$here/main.cpp" -o "$work/pch/main.o"

python3 "$here/port_check.py" "$api" --work "$work" --cxx "$cxx" --cxxflags "$flags -Winvalid-pch" \
  --ldflags "$libdir/libkiln_core.so -Wl,-rpath,$libdir $gtest_libs" --pch-header "$pch" \
  --main-object "$work/pch/main.o" --kiln "$kiln" --jobs "${JOBS:-2}" --nice "$niceness" \
  ${PORT_CHECK_FILES:+--files $PORT_CHECK_FILES}
