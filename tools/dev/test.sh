#!/usr/bin/env bash
# The whole test suite from a fresh machine: installs missing packages, builds,
# runs the bounded fuzz runs (clang build in build-fuzz/), then every CTest test
# (unit and lab). Lab tests boot the Soft-RoCE VM (tools/lab); where it cannot
# start they are skipped, unless QPCONNECT_LAB_REQUIRED=1 (CI) makes that fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh --fuzz
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
tools/dev/build.sh -DQPCONNECT_WERROR="$werror"

if [[ -f oob/fuzz/CMakeLists.txt ]]; then
  QPC_BUILD_DIR=build-fuzz tools/dev/build.sh -DCMAKE_CXX_COMPILER=clang++-14 \
    -DQPCONNECT_BUILD_FUZZERS=ON -DQPCONNECT_BUILD_TOOLS=OFF -DQPCONNECT_BUILD_TESTS=OFF -DQPCONNECT_BUILD_EXAMPLES=OFF
  ctest --test-dir build-fuzz -L fuzz --output-on-failure
fi

ctest --test-dir build --output-on-failure -j 2 "$@"
