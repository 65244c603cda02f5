#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark: how long qp-info takes to list both lab devices with their
# 1024-entry GID tables, next to the stock `ibv_devinfo -v` (which reads the
# GID table entry by entry). Run inside the lab:
#   tools/lab/lab-run -- tools/bench/qp_info.sh build/tools/qp-info/qp-info
# Prints the median of N runs of each (wall clock, ms). Figures under TCG are
# for ratios only.
set -euo pipefail
qp_info=$1
runs=${2:-7}

source "$(dirname "${BASH_SOURCE[0]}")/median_ms.sh"

echo "runs per command: $runs (median wall ms)"
echo "qp-info --help (process start only):  $(median_ms "$qp_info" --help)"
echo "qp-info (both devices, table):        $(median_ms "$qp_info")"
echo "qp-info --json (both devices):        $(median_ms "$qp_info" --json)"
echo "ibv_devinfo -v (both devices):        $(median_ms ibv_devinfo -v)"
echo "ibv_devices (list only):              $(median_ms ibv_devices)"
