#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite from a fresh machine: installs missing packages, builds,
# runs the bounded fuzz runs (clang build in build-fuzz/), then every CTest test
# (unit and lab). Lab tests boot the Soft-RoCE VM (tools/lab); where it cannot
# start they are skipped, unless QPCONNECT_LAB_REQUIRED=1 (CI) makes that fail.
# Ends with the number of tests run, passed, failed, skipped and disabled per
# CTest label, with the summed time of each label's tests
# (tools/dev/ctest_summary.py), and the wall time of each ctest run and of the
# whole script. Exits non-zero if a test failed,
# and, under CI=true or QPCONNECT_LAB_REQUIRED=1, if one was skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/lab/skip_or_fail.sh  # qpc_skips_are_failures
tools/dev/deps.sh --group test --fuzz
unset QPC_BUILD_TARGETS  # the whole tree (main.sh builds only its two tools)
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
# Installed under /usr, the Debian packages (ctest label `deb`) get Debian's
# layout: libraries in lib/<multiarch> (cmake/QpcPackaging.cmake).
tools/dev/build.sh -DQPCONNECT_WERROR="$werror" -DCMAKE_INSTALL_PREFIX=/usr

# Each ctest run writes its results as JUnit XML for the summary; a failing
# run does not stop the next, the exit status says it at the end.
summary=() rc=0 walls=()
# wall SECONDS: "12m34s"
wall() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
if [[ -f oob/fuzz/CMakeLists.txt ]]; then
  QPC_BUILD_DIR=build-fuzz tools/dev/build.sh -DCMAKE_CXX_COMPILER=clang++-14 \
    -DQPCONNECT_BUILD_FUZZERS=ON -DQPCONNECT_BUILD_TOOLS=OFF -DQPCONNECT_BUILD_TESTS=OFF -DQPCONNECT_BUILD_EXAMPLES=OFF
  results=$PWD/build-fuzz/Testing/qpc-results.xml
  rm -f "$results"
  t0=$SECONDS
  ctest --test-dir build-fuzz -L fuzz --output-on-failure --output-junit "$results" || rc=1
  walls+=("ctest build-fuzz -L fuzz: $(wall $((SECONDS - t0)))")
  summary+=(build-fuzz "$results")
fi

results=$PWD/build/Testing/qpc-results.xml
rm -f "$results"
t0=$SECONDS
ctest --test-dir build --output-on-failure -j 2 --output-junit "$results" "$@" || rc=1
walls+=("ctest build: $(wall $((SECONDS - t0)))")
summary+=(build "$results")

echo
echo "== tests per label"
strict=()
qpc_skips_are_failures && strict=(--fail-on-skip)
tools/dev/ctest_summary.py "${strict[@]}" "${summary[@]}" || rc=1
echo
echo "== wall time"
printf '%s\n' "${walls[@]}" "test.sh in all (packages, builds, tests): $(wall "$SECONDS")"
exit "$rc"
