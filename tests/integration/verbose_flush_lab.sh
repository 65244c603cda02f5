#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-connect -v writes each step as it happens (issue 14): with stdout a
# file (fully buffered unless flushed), a server waiting for a peer that never
# comes has already written its open and exchange steps while it still runs.
#
# Usage: verbose_flush_lab.sh QP_CONNECT
set -uo pipefail
bin=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" -v -d "$QPC_DEV0" --oob file --oob-dir "$work" --role server --timeout 8 \
  >"$work/out" 2>&1 &
pid=$!
# Until both steps are in the file (or 7 s, before its 8 s --timeout ends
# it): the time a loaded emulated guest takes to open the device is no part
# of the claim. What was copied while it still ran (checked after the copy)
# was written before the exit's flush.
alive=no
for ((i = 0; i < 70; i++)); do
  cp "$work/out" "$work/seen"
  kill -0 "$pid" 2>/dev/null && alive=yes || { alive=no; break; }
  grep -q "qp-connect: opened $QPC_DEV0" "$work/seen" && break
  sleep 0.1
done
wait "$pid"; rc=$?
echo "--- written while it ran (still running after the copy: $alive):"
cat "$work/seen"
echo "--- at exit ($rc):"
cat "$work/out"
fail=0
[[ $alive == yes ]] || { echo "FAIL: qp-connect ended before the check (exit $rc)"; fail=1; }
for step in "opening $QPC_DEV0" "opened $QPC_DEV0"; do
  grep -q "qp-connect: $step" "$work/seen" || { echo "FAIL: '$step' not written while running"; fail=1; }
done
[[ $rc -eq 4 ]] || { echo "FAIL: exit $rc, want 4 (no peer)"; fail=1; }
exit $fail
