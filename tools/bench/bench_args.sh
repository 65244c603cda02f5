# Sourced by the lab benchmarks that compare qp-connect binaries (start.sh,
# start_phases.sh): their command line, `[--rounds R] QP_CONNECT...` on the
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
