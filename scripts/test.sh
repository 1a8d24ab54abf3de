#!/usr/bin/env bash
# Builds kiln and runs every test: installs what is missing (setup.sh), configures build/
# (RelWithDebInfo), builds with all cores and runs ctest. Extra arguments go to ctest
# (e.g. `bash scripts/test.sh -R loader`).
# KILN_SANITIZE=address,undefined (or thread) builds and tests in build-asan/ (build-tsan/)
# instead, with those sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

build_dir=build
configure_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ -n "${KILN_SANITIZE:-}" ]; then
  case "$KILN_SANITIZE" in
    *thread*) build_dir=build-tsan ;;
    *) build_dir=build-asan ;;
  esac
  configure_args+=(-DKILN_SANITIZE="$KILN_SANITIZE")
  # LeakSanitizer's exit-time tracer crashes ("Tracer caught signal 11") while oneDNN's GNU
  # OpenMP worker threads exist (measured on this machine, GCC 12): run oneDNN on one thread.
  case "$KILN_SANITIZE" in
    *address*) export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" ;;
  esac
fi

cmake -S . -B "$build_dir" "${configure_args[@]}"
cmake --build "$build_dir" -j"$(nproc)"
cd "$build_dir"
BOOST_TEST_COLOR_OUTPUT=no ctest --output-on-failure "$@"
