#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# not_built.sh REASON...: stands in for tests that were not registered (a
# dependency was not found when configuring), so that their absence shows:
# skipped with REASON, or a failure under QPCONNECT_LAB_REQUIRED=1 or CI=true.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../tools/lab/skip_or_fail.sh"
skip_or_fail "$*"
