#!/usr/bin/env bash
# Runs kiln's demo: installs what is missing (setup.sh), configures and builds build/
# (RelWithDebInfo), then runs build/bin/kiln-demo with any arguments given here.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target kiln-demo kiln-plugins
exec build/bin/kiln-demo "$@"
