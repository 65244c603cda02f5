#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds and runs a
# consumer that uses find_package(qpconnect) and links qpconnect::core,
# qpconnect::qpconnect and qpconnect::oob.
# Usage: package_test.sh BUILD_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build=$1 consumer=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$consumer" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/b" >/dev/null
"$tmp/b/c"
