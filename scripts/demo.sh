#!/usr/bin/env bash
# Runs kiln's demo: installs what is missing (setup.sh), configures and builds build/
# (RelWithDebInfo), then runs build/bin/kiln-demo with its output folder in build/demo (a later
# --out given here wins) and any other arguments given here: --quick for a short run, --tour for
# the tensor examples, --help for the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target kiln-demo kiln-plugins
exec build/bin/kiln-demo --out build/demo "$@"
