# SPDX-License-Identifier: MIT
# Sourced by the lab benchmarks that compare qp-connect binaries (start.sh,
# start_phases.sh, timeline.sh): their command line, `[--rounds R] QP_CONNECT...` on the
# host and `--rounds R --inside QP_CONNECT...` when they rerun themselves in
# the lab.
#
# bench_args NAME ARGS...: sets `rounds` (default 10), `inside` (1 after
# --inside) and the array `bins` (the binaries; on the host each checked to be
# an executable and made absolute, for the guest). Bad usage: a message
# naming NAME on stderr and exit 2.
bench_args() {
  local name=$1
  shift
  rounds=10 inside=0 bins=()
  if [[ ${1:-} == --rounds ]]; then
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "$name: --rounds needs a positive count" >&2; exit 2; }
    rounds=$2
    shift 2
  fi
  if [[ ${1:-} == --inside ]]; then
    inside=1
    shift
    bins=("$@")
    return
  fi
  [[ $# -ge 1 ]] || { echo "usage: $name [--rounds R] QP_CONNECT [QP_CONNECT...]" >&2; exit 2; }
  local b
  for b in "$@"; do
    [[ -x $b && -f $b ]] || { echo "$name: $b is not an executable" >&2; exit 2; }
    bins+=("$(cd "$(dirname "$b")" && pwd)/$(basename "$b")")
  done
}

# bench_in_lab SCRIPT PRELOAD_C: for a benchmark that stamps the programs it
# runs. On the host, compiles PRELOAD_C (an LD_PRELOAD library in
# tools/bench) and start_exec.c (the fork/exec wrapper that preloads it) into
# a fresh directory under ${TMPDIR:-/tmp}, reruns SCRIPT in the lab as
# `SCRIPT --rounds R --inside BINS...` with QPC_BENCH_TOOLS naming that
# directory, removes it, and exits with the lab run's status (1 when a
# compile fails). Uses `rounds` and `bins` from bench_args.
bench_in_lab() {
  local script=$1 preload=$2 dir tools status
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  tools=$(mktemp -d "${TMPDIR:-/tmp}/qpc-bench.XXXXXX") || exit 1
  if ! cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$tools/${preload%.c}.so" \
      "$dir/$preload" -ldl ||
    ! cc -std=c11 -O2 -Wall -Wextra -Werror -o "$tools/start_exec" "$dir/start_exec.c"; then
    rm -rf "$tools"
    exit 1
  fi
  "$dir/../lab/lab-run" --timeout 1800 -- env QPC_BENCH_TOOLS="$tools" \
    "$script" --rounds "$rounds" --inside "${bins[@]}"
  status=$?
  rm -rf "$tools"
  exit $status
}
