#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages qpconnect needs to build, test and run its lab.
# Idempotent and quiet when nothing is missing. Usage: tools/dev/deps.sh [--fuzz]
set -euo pipefail

pkgs=(
  # build
  cmake g++ make pkg-config libibverbs-dev libibumad-dev ibverbs-providers
  libprotobuf-dev protobuf-compiler libboost-dev libgtest-dev libgmock-dev libssl-dev
  nlohmann-json3-dev clang-format
  libcli11-dev  # the tools' option parser (tools/common/cli_args.cc), header-only
  python3-jsonschema  # tests: the tools' JSON output against docs/schemas/ (docs/json.md)
  help2man  # man pages of the tools, generated from their --help and --version
  librdmacm-dev  # libqpcm (rdmacm/): librdmacm's ABI header, <rdma/rdma_cma.h>
  libmnl-dev  # netlink: qp-inspect (RDMA netlink: the resource tracker, counters, as iproute2's rdma) and the connector's RoCE path facts (rtnetlink: route, neighbour, netdev)
  librdmacm-dev  # tests/rdmacm: cm_events, an rdma_cm program of ours (issue 29)
  # the Soft-RoCE lab (tools/lab) and the stock peers its tests run
  qemu-system-x86 busybox-static cpio xz-utils iproute2 ibverbs-utils rdma-core
  perftest rdmacm-utils
  libfabric-bin  # tests/rdmacm/libfabric.sh: fi_pingpong and fi_info over libfabric1's verbs provider (issue 39); Debian has no fabtests package
  # the `sim` tests (tests/sim): OpenSM on an ibsim fabric, saquery to compare
  ibsim-utils libumad2sim0 opensm infiniband-diags
  # the MPI mesh (mesh/, qp-mesh) and its lab tests under mpirun
  libopenmpi-dev openmpi-bin
)
if [[ "${1:-}" == "--fuzz" ]]; then
  pkgs+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
