#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages qpconnect needs, by group. Idempotent and quiet
# when nothing is missing.
#
# Usage: tools/dev/deps.sh [--group build|lab|main|test] [--fuzz]
#   --group build configure the tree without tests, build qp-info and qp-connect
#   --group lab   boot the Soft-RoCE lab (tools/lab)
#   --group main  build and lab: what tools/dev/main.sh runs (it installs the
#                 two one after the other, the lab's while the tools compile)
#   --group test  main, and what tools/dev/test.sh adds: the test suite, the
#                 other tools' optional parts (MPI), man pages, the stock
#                 peers of the lab tests, the `sim` tests, the Debian packages
#                 (the default)
#   --fuzz        also clang for the fuzz build
# QPC_DEPS_PRINT=1 prints the group's packages, one a line, and installs nothing.
set -euo pipefail

build=(
  # configure (every find_package of CMakeLists.txt that is REQUIRED) and build
  cmake g++ make pkg-config libibverbs-dev libibumad-dev libmnl-dev
  libprotobuf-dev protobuf-compiler libboost-dev libssl-dev nlohmann-json3-dev
  libcli11-dev  # the tools' option parser (tools/common/cli_args.cc), header-only
  librdmacm-dev  # libqpcm (rdmacm/): librdmacm's ABI header, <rdma/rdma_cma.h>
)
lab=(
  # the Soft-RoCE lab (tools/lab): qemu, the guest's initramfs, ip and rdma,
  # the rxe verbs provider
  qemu-system-x86 busybox-static cpio xz-utils iproute2 ibverbs-providers
)
test=(
  libgtest-dev libgmock-dev clang-format
  python3-jsonschema  # tests: the tools' JSON output against docs/schemas/ (docs/json.md)
  help2man  # man pages of the tools, generated from their --help and --version
  # the stock peers the lab tests run (ibv_*_pingpong, perftest, rping, ...)
  ibverbs-utils rdma-core perftest rdmacm-utils
  libfabric-bin  # tests/rdmacm/libfabric.sh: fi_pingpong and fi_info over libfabric1's verbs provider (issue 39); Debian has no fabtests package
  # the `sim` tests (tests/sim): OpenSM on an ibsim fabric, saquery to compare
  ibsim-utils libumad2sim0 opensm infiniband-diags
  # the MPI mesh (mesh/, qp-mesh) and its lab tests under mpirun
  libopenmpi-dev openmpi-bin
  # the Debian packages (tests/package/deb_install_test.sh): cpack's
  # dpkg-shlibdeps and file, man to open the installed pages
  dpkg-dev file man-db
)

group=test fuzz=0
while (($#)); do
  case $1 in
    --group)
      group=${2:-}
      shift 2 || true
      ;;
    --fuzz) fuzz=1 && shift ;;
    *) echo "usage: tools/dev/deps.sh [--group build|lab|main|test] [--fuzz]" >&2 && exit 2 ;;
  esac
done
case $group in
  build) pkgs=("${build[@]}") ;;
  lab) pkgs=("${lab[@]}") ;;
  main) pkgs=("${build[@]}" "${lab[@]}") ;;
  test) pkgs=("${build[@]}" "${lab[@]}" "${test[@]}") ;;
  *) echo "deps.sh: --group wants build, lab, main or test, not '$group'" >&2 && exit 2 ;;
esac
((fuzz)) && pkgs+=(clang-14 libclang-rt-14-dev)

if [[ ${QPC_DEPS_PRINT:-} == 1 ]]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
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
