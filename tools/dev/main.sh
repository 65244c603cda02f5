#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job from a fresh machine: installs packages, builds, and runs a real
# qp-connect RC session inside the Soft-RoCE lab: a server on rxe0 and a client
# on rxe1 (-> 10.99.0.1) exchange over TCP, validate, connect by hand and prove
# the connection with SEND/RECV, RDMA WRITE and RDMA READ. qp-info first shows
# both devices with their GIDs.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Only what runs below: the packages of the `build` and `lab` groups (no test
# suite, MPI, man pages or stock peers), the tree configured without tests and
# examples (no GoogleTest needed), and only the two tools with the libraries
# they link. The lab's packages install while the tools compile (apt waits on
# the network and the disk, the compiler on the CPUs). tools/dev/test.sh later
# reconfigures the same build/ with everything (build.sh turns tests and
# examples back on unless told otherwise) and reuses what is built.
tools/dev/deps.sh --group build
tools/dev/deps.sh --group lab &
lab_deps=$!
QPC_BUILD_TARGETS="qp-info qp-connect" tools/dev/build.sh \
  -DQPCONNECT_BUILD_TESTS=OFF -DQPCONNECT_BUILD_EXAMPLES=OFF
wait "$lab_deps" || { echo "main.sh: installing the lab's packages failed (tools/dev/deps.sh --group lab)" >&2; exit 1; }
exec tools/lab/lab-run -- bash -c '
  set -u
  bin=$PWD/build/tools
  $bin/qp-info/qp-info
  echo
  echo "== qp-connect -d $QPC_DEV0 --transport rc --oob tcp   (server)"
  echo "== qp-connect -d $QPC_DEV1 --transport rc --oob tcp $QPC_IP0   (client)"
  $bin/qp-connect/qp-connect -d "$QPC_DEV0" --transport rc --oob tcp -n 1000 > /tmp/server.out 2>&1 &
  server=$!
  $bin/qp-connect/qp-connect -d "$QPC_DEV1" --transport rc --oob tcp -n 1000 "$QPC_IP0"
  client_rc=$?
  wait $server
  server_rc=$?
  echo "-- server output:"
  cat /tmp/server.out
  echo "server exit $server_rc, client exit $client_rc"
  [ $server_rc -eq 0 ] && [ $client_rc -eq 0 ]
'
