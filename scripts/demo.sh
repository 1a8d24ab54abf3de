#!/usr/bin/env bash
# Runs kiln's demo: installs what is missing (setup.sh), configures and builds build/
# (RelWithDebInfo), then runs build/bin/kiln-demo with the arguments given here (--quick for a
# short run, --tour for the tensor examples, --help for the rest) and its output folder in
# build/demo (a --out given here wins).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target kiln-demo kiln-plugins
out=(--out build/demo)
for arg in "$@"; do
  if [[ $arg == --tour ]]; then out=(); fi
done
exec build/bin/kiln-demo "${out[@]}" "$@"
