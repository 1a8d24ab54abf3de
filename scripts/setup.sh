#!/usr/bin/env bash
# Installs the Debian packages kiln needs to build and test, and only those that are missing.
# Safe to run again: when everything is there it installs nothing and needs no network.
set -euo pipefail

packages=(
  cmake g++ make                # the build
  libboost-dev libboost-test-dev  # Boost.DLL (plugin loader) and Boost.Test (tests)
  libdnnl-dev ocl-icd-opencl-dev  # oneDNN for the CPU plugin (its CMake config needs OpenCL)
  libtbb-dev                    # oneTBB for the CPU plugin
  libarchive-dev                # tar shards for the dataset plugin
  libgloo-dev                   # the gloo communication backend (distributed training)
  libopenmpi-dev openmpi-bin    # the mpi communication backend, and mpirun for its tests
  libpng-dev libjpeg62-turbo-dev nlohmann-json3-dev  # png, jpg and json decoders (datasets)
  clang-14 libclang-rt-14-dev   # the clang build (CI) and the libFuzzer targets
  clang-format-14               # scripts/check_format.sh (CI), .clang-format
  libgtest-dev libgmock-dev python3  # tools/port_check (libtorch-style tests against kiln)
  python3-torch python3-torchvision  # tests/models: torchvision's models and weights, made at test time
  libopenblas0-pthread          # bench/: PyTorch's float32 matmul on OpenBLAS, not the generic BLAS
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import (kiln_onnx): the schema, checker, converter
  libonnx-testdata python3-onnx  # tests/onnx: ONNX's backend test data; making test models
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "setup: not root and no sudo: as root, run apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
