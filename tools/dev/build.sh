#!/usr/bin/env bash
# Configures and builds qpconnect into build/ (or $QPC_BUILD_DIR).
# Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${QPC_BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs" 2>&1 | grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)' || true
# grep above only filters progress; fail if the build failed.
cmake --build "$build_dir" -j "$jobs" >/dev/null
