#!/usr/bin/env bash
# Runs README.md's "Connecting two hosts" examples as written, in the lab
# (issue 14): every `hostA$`/`hostB$` line of the section's sh blocks, in
# order, with only the lab's names put in: mlx5_0 -> QPC_DEV0 on hostA and
# QPC_DEV1 on hostB, HOST hostA -> QPC_IP0, each host its own directory,
# scp between them a cp. A hostA qp-connect without HOST (a server) runs in
# the background until the next hostB qp-connect, its client, is done. Every
# command must exit 0.
#
# Usage: readme_examples_lab.sh README.md TOOLS_BIN_DIR
set -uo pipefail

readme=$1 tools=$2
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/hostA" "$work/hostB"
export PATH="$tools/qp-connect:$tools/qp-validate:$PATH"

# The section's example lines, comments dropped (a file: the guest has no
# /dev/fd for process substitution).
lines=()
awk '/^## Connecting two hosts/{on=1; next} /^## /{on=0}
  on && /^```sh/{blk=1; next} on && /^```/{blk=0} on && blk && /^host[AB]\$ /' "$readme" |
  sed -e 's/[[:space:]]\+#.*$//' >"$work/lines"
mapfile -t lines <"$work/lines"
n=${#lines[@]}
if [[ $n -lt 4 ]]; then echo "FAIL: found $n example lines in $readme"; exit 1; fi

server_pid="" server_line="" fail=0
for line in "${lines[@]}"; do
  host=${line%%\$ *} cmd=${line#*\$ }
  if [[ $host == hostA ]]; then dev=$QPC_DEV0; else dev=$QPC_DEV1; fi
  cmd=${cmd//mlx5_0/$dev}
  cmd=$(sed -E -e "s/ hostA\$/ $QPC_IP0/" \
               -e "s#^scp (-p )?([^ ]+) hostB:\$#cp \\1\\2 $work/hostB/#" \
               -e "s#^scp (-p )?hostB:([^ ]+) \\.\$#cp \\1$work/hostB/\\2 .#" <<<"$cmd")
  echo "--- $host\$ $cmd"
  if [[ $host == hostA && $cmd == qp-connect* && $cmd != *--gen-psk* ]]; then
    (cd "$work/$host" && exec bash -c "$cmd") >"$work/server.out" 2>&1 &
    server_pid=$! server_line=$cmd
    sleep 0.3
    continue
  fi
  (cd "$work/$host" && bash -c "$cmd") 2>&1 | tail -n 5
  rc=${PIPESTATUS[0]}
  [[ $rc -eq 0 ]] || { echo "FAIL: $host\$ $cmd exited $rc"; fail=1; }
  if [[ -n $server_pid && $host == hostB && $cmd == qp-connect* ]]; then
    wait "$server_pid"; rc=$?
    echo "--- (server) hostA\$ $server_line: exit $rc"
    tail -n 5 "$work/server.out"
    [[ $rc -eq 0 ]] || { echo "FAIL: hostA\$ $server_line exited $rc"; fail=1; }
    server_pid=""
  fi
done
[[ -z $server_pid ]] || { echo "FAIL: a server with no client: $server_line"; kill "$server_pid"; fail=1; }
if [[ $fail -eq 0 ]]; then echo "README examples: all $n ran and exited 0"; fi
exit $fail
