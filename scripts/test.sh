#!/usr/bin/env bash
# Builds kiln and runs every test: installs what is missing (setup.sh), configures build/
# (RelWithDebInfo), builds with all cores and runs ctest. Extra arguments go to ctest
# (e.g. `bash scripts/test.sh -R loader`).
# KILN_SANITIZE=address,undefined (or thread) builds and tests in build-asan/ (build-tsan/)
# instead, with those sanitizers (docs/sanitizers.md).
# KILN_COMPILER=clang builds with clang++ 14 in build-clang/ instead.
# Warnings are errors (-DKILN_WERROR=ON; KILN_CMAKE_ARGS=-DKILN_WERROR=OFF turns that off), except
# in g++ sanitizer builds, where GCC's flow analysis through the instrumentation warns falsely.
# KILN_CMAKE_ARGS: more configure arguments, after the script's own (e.g. -DKILN_BUILD_BENCH=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

build_dir=build
configure_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "${KILN_COMPILER:-gcc}" in
  gcc)
    if [ -z "${KILN_SANITIZE:-}" ]; then configure_args+=(-DKILN_WERROR=ON); fi
    ;;
  clang)
    build_dir=build-clang
    configure_args+=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DKILN_WERROR=ON)
    ;;
  *) echo "test.sh: KILN_COMPILER must be gcc or clang, got '$KILN_COMPILER'" >&2; exit 2 ;;
esac
if [ -n "${KILN_SANITIZE:-}" ]; then
  case "$KILN_SANITIZE" in
    *thread*) build_dir=build-tsan ;;
    *) build_dir=build-asan ;;
  esac
  [ "${KILN_COMPILER:-gcc}" = clang ] && build_dir="$build_dir-clang"
  # -O1 with line tables: what the sanitizers' reports need, at half the compile time of -O2 -g;
  # assertions stay on. nvcc takes no -fsanitize flags: no CUDA plugin.
  configure_args+=(-DKILN_SANITIZE="$KILN_SANITIZE" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
                   -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DKILN_WITH_CUDA=OFF)
fi

read -r -a extra_args <<< "${KILN_CMAKE_ARGS:-}"
cmake -S . -B "$build_dir" "${configure_args[@]}" "${extra_args[@]}"
cmake --build "$build_dir" -j"$(nproc)"
cd "$build_dir"
# Each test has its own TIMEOUT (cmake/KilnTesting.cmake, scaled in sanitizer builds), and ctest
# sets the sanitizers' options (suppressions) in each test's environment.
BOOST_TEST_COLOR_OUTPUT=no ctest --output-on-failure "$@"
