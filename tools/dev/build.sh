#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds qpconnect into build/ (or $QPC_BUILD_DIR).
# Extra arguments go to the CMake configure step. QPC_BUILD_TARGETS="a b"
# builds only those targets (and what they need), not the whole tree.
# Tests and examples are configured in unless an argument turns them off (as
# tools/dev/main.sh does), so a build dir main.sh configured gets them back.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${QPC_BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
targets=()
[[ -n ${QPC_BUILD_TARGETS:-} ]] && read -ra names <<<"$QPC_BUILD_TARGETS" && targets=(--target "${names[@]}")
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DQPCONNECT_BUILD_TESTS=ON -DQPCONNECT_BUILD_EXAMPLES=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs" "${targets[@]}" 2>&1 |
  grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)' || true
# grep above only filters progress; fail if the build failed.
cmake --build "$build_dir" -j "$jobs" "${targets[@]}" >/dev/null
