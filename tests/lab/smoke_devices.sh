#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lab_smoke_devices: the lab's contract holds - two RDMA devices, port 1
# ACTIVE, and QPC_GID0/1 naming RoCE v2 GIDs that are the IPv4-mapped form of
# QPC_IP0/1 (on an InfiniBand link in native mode, only that the GID exists).
# Runs inside tools/lab/lab-run (see docs/lab.md).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

for v in QPC_LAB QPC_DEV0 QPC_DEV1 QPC_GID0 QPC_GID1 QPC_PORT; do
  [[ -n ${!v:-} ]] || fail "$v is not set"
done
echo "lab: $QPC_LAB, devices $QPC_DEV0 $QPC_DEV1, port $QPC_PORT"

for n in 0 1; do
  dev_var=QPC_DEV$n gid_var=QPC_GID$n ip_var=QPC_IP$n
  dev=${!dev_var} gid=${!gid_var}
  port=/sys/class/infiniband/$dev/ports/$QPC_PORT
  [[ -d $port ]] || fail "$dev: $port missing"
  read -r state <"$port/state"
  [[ $state == "4: ACTIVE" ]] || fail "$dev: port state '$state', want '4: ACTIVE'"
  [[ $gid =~ ^[0-9]+$ ]] || fail "$gid_var='$gid' is not an index"
  read -r g <"$port/gids/$gid" || fail "$dev: cannot read gids/$gid"
  read -r ll <"$port/link_layer"
  if [[ $ll == InfiniBand ]]; then
    echo "$dev: ACTIVE, InfiniBand, GID[$gid] $g"
    continue
  fi
  read -r type <"$port/gid_attrs/types/$gid" || fail "$dev: no type for gid $gid"
  [[ $type == "RoCE v2" ]] || fail "$dev: gid $gid type '$type', want 'RoCE v2'"
  [[ $g == 0000:0000:0000:0000:0000:ffff:* ]] || fail "$dev: gid $gid = $g is not IPv4-mapped"
  ip=${!ip_var:-}
  [[ -n $ip ]] || fail "$ip_var is not set"
  IFS=. read -r a b c d <<<"$ip"
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
  [[ $g == "$want" ]] || fail "$dev: gid $gid = $g, want $want ($ip)"
  echo "$dev: ACTIVE, $ll, GID[$gid] $g = ::ffff:$ip (RoCE v2)"
done

# The verbs library sees both devices too.
list=$(ibv_devices) || fail "ibv_devices failed"
for dev in "$QPC_DEV0" "$QPC_DEV1"; do
  grep -qw -- "$dev" <<<"$list" || fail "ibv_devices does not list $dev"
done
echo "PASS"
