#!/usr/bin/env bash
# The main job from a fresh machine: installs missing packages, builds, and runs
# qp-info inside the Soft-RoCE lab, which shows rxe0 and rxe1 with their GIDs.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh
tools/dev/build.sh
exec tools/lab/lab-run -- "$PWD/build/tools/qp-info/qp-info"
