#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's main command on a fresh Debian 12, phase by phase: a minimal
# Debian 12 root (debootstrap --variant=minbase bookworm) stands for the fresh
# machine; a fresh clone of this repository's HEAD goes into it, and inside it
# (chroot, with /proc, /sys and /dev of the host) tools/dev/main.sh's steps
# run one at a time, each timed:
#   packages  tools/dev/deps.sh --group main (apt-get update and install)
#   build     the two tools from a clean build/, as main.sh builds them
#   lab       tools/dev/main.sh itself, packages and build already there: the
#             lab image (the kernel package downloaded once) and the VM run
# The host's lab lock (~/.cache/qpconnect-lab/vm.lock) is held during the lab
# phase, so no other lab VM runs beside it and none is waited for inside it.
# Also times the old all-in-one package list (tools/dev/deps.sh --group test,
# which is what main.sh installed before the groups) on a second fresh root.
#
# Usage: tools/bench/first_run.sh [OUT]   (root; debootstrap; network)
# Writes the table to OUT (default docs/bench/first_run.txt) and stdout;
# deletes the roots afterwards. The host's load is printed with each phase:
# the build's wall time grows with other work on the machine, its CPU time
# (user+sys) does not.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/docs/bench/first_run.txt}
[[ $(id -u) -eq 0 ]] || { echo "first_run.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "first_run.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
work=$(mktemp -d /tmp/qpc-first-run.XXXXXX)
mounted=()
cleanup() {

  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
lines=()
note() { lines+=("$*"); echo "first_run: $*" >&2; }

# fresh ROOT: a minimal Debian 12 with /proc, /sys, /dev and DNS.
fresh() {
  local root=$1
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 ||
    { tail -n 5 "$root.log" >&2; exit 1; }
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  mount --rbind /sys "$root/sys" && mounted+=("$root/sys")
  mount --rbind /dev "$root/dev" && mounted+=("$root/dev")
}
# timed ROOT NAME CMD: runs CMD (bash) in ROOT's clone; notes its wall and CPU time.
timed() {
  local root=$1 name=$2 cmd=$3 t
  t=$(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
    bash -c 'cd /root/qpconnect && TIMEFORMAT="%R %U %S"; { time { '"$cmd"'; } >/root/'"$name"'.log 2>&1; } 2>&1') ||
    { tail -n 20 "$root/root/$name.log" >&2; echo "first_run: $name failed" >&2; exit 1; }
  read -r wall user sys <<<"$t"
  note "$(printf '%-9s %7.1f s wall  %7.1f s cpu (user+sys)  load before %s' "$name" "$wall" "$(echo "$user $sys" | awk '{print $1 + $2}')" "$before")"
  total=$(awk -v a="$total" -v b="$wall" 'BEGIN {print a + b}')
}

root=$work/root
fresh "$root"
git clone -q "$src" "$root/root/qpconnect"
note "commit $(git -C "$src" rev-parse --short HEAD), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
total=0
before=$(load); timed "$root" packages "tools/dev/deps.sh --group main"
before=$(load); timed "$root" build 'QPC_BUILD_TARGETS="qp-info qp-connect" tools/dev/build.sh -DQPCONNECT_BUILD_TESTS=OFF -DQPCONNECT_BUILD_EXAMPLES=OFF'
lock=${HOME:-/root}/.cache/qpconnect-lab/vm.lock
mkdir -p "$(dirname "$lock")"
exec {lock_fd}>"$lock"
flock -w 1800 "$lock_fd"
before=$(load); timed "$root" lab "tools/dev/main.sh"
flock -u "$lock_fd"
grep -q "server exit 0, client exit 0" "$root/root/lab.log" || { echo "first_run: the main job did not connect" >&2; exit 1; }
note "$(printf 'main.sh   %7.1f s in all (packages + build + lab)' "$total")"

old=$work/old
fresh "$old"
mkdir -p "$old/root/qpconnect/tools/dev"
cp "$src/tools/dev/deps.sh" "$old/root/qpconnect/tools/dev/"
total=0
before=$(load); timed "$old" packages-all "tools/dev/deps.sh --group test"
printf '%s\n' "${lines[@]}" >"$out"
