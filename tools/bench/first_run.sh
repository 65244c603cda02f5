#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's main command on a fresh Debian 12: a minimal Debian 12 root
# (debootstrap --variant=minbase bookworm) stands for the fresh machine; a
# fresh clone of this repository's HEAD goes into it, and `tools/dev/main.sh`
# runs inside it (chroot, with the host's /proc, /sys and /dev), timed as a
# whole: packages (the build group, then the lab group while the tools
# compile), the build, the lab image (its kernel package downloaded) and the
# VM run. The host's lab lock is bind-mounted into the root, so the VM waits
# for another lab VM as any run does; the output says if it had to.
# Then, on a second fresh root, the old all-in-one package list
# (tools/dev/deps.sh --group test) is timed alone, for comparison.
#
# Usage: tools/bench/first_run.sh [OUT]   (root; debootstrap; network)
# Writes the lines to OUT (default docs/bench/first_run.txt) and stdout; deletes
# the roots afterwards. Each line gives the wall time, the CPU time
# (user+sys) and the load average before it: the wall time grows with other
# work on the machine, the CPU time does not.
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
  local root=$1 name=$2 cmd=$3 t before
  before=$(load)
  t0=$(date +%s)
  t=$(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
    bash -c 'cd /root/qpconnect && TIMEFORMAT="%R %U %S"; { time { '"$cmd"'; } >/root/'"$name"'.log 2>&1; } 2>&1') ||
    { tail -n 20 "$root/root/$name.log" >&2; echo "first_run: $name failed" >&2; exit 1; }
  read -r wall user sys <<<"$t"
  note "$(printf '%-13s %6.1f s wall  %6.1f s cpu (user+sys)  load before %s' "$name" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" "$before")"
}

root=$work/root
fresh "$root"
git clone -q "$src" "$root/root/qpconnect"
lock=${HOME:-/root}/.cache/qpconnect-lab/vm.lock
mkdir -p "$(dirname "$lock")" "$root/root/.cache/qpconnect-lab"
touch "$lock" "$root/root/.cache/qpconnect-lab/vm.lock"
mount --bind "$lock" "$root/root/.cache/qpconnect-lab/vm.lock" && mounted+=("$root/root/.cache/qpconnect-lab/vm.lock")
note "commit $(git -C "$src" rev-parse --short HEAD), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
timed "$root" main.sh "tools/dev/main.sh"
grep -q "server exit 0, client exit 0" "$root/root/main.sh.log" || { echo "first_run: the main job did not connect" >&2; exit 1; }
built=$(($(stat -c %Y "$root/root/qpconnect/build/tools/qp-connect/qp-connect") - t0))
note "  the two tools were built ${built} s after the start"
grep -q "waiting for another lab VM" "$root/root/main.sh.log" &&
  note "  (the lab VM waited for another one: the wall time includes that wait)"

old=$work/old
fresh "$old"
mkdir -p "$old/root/qpconnect/tools/dev"
cp "$src/tools/dev/deps.sh" "$old/root/qpconnect/tools/dev/"
timed "$old" packages-all "tools/dev/deps.sh --group test"
printf '%s\n' "${lines[@]}" >"$out"
