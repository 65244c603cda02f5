# SPDX-License-Identifier: MIT
# Sourced by the package tests (package_test.sh, deb_install_test.sh).
# run LOG CMD...: runs CMD with its output in $work/LOG; on failure shows that
# output and calls the sourcing script's fail() with the command.
# Needs: $work (a scratch directory) and fail MESSAGE (exits) in the caller.
run() {
  local log=$1
  shift
  "$@" >"$work/$log" 2>&1 || {
    cat "$work/$log" >&2
    fail "$* (log above)"
  }
}
