# SPDX-License-Identifier: MIT
# Sourced by the tests/rdmacm lab scripts (bash, inside tools/lab/lab-run).
#
# A "management network" with no RDMA device, standing in for the Ethernet
# network a cluster's hosts reach each other on when their RDMA devices have
# no IP address (no IPoIB, no RoCE netdev address):
#
#   mgmt_net_up        veth pair mgmt0/mgmt1 with fixed MACs, 10.77.0.1/24 on
#                      mgmt0 and 10.77.0.2/24 on mgmt1, no rxe link on either;
#                      checks that neither rdma link uses them and that TCP
#                      from 10.77.0.2 to 10.77.0.1 works (both addresses are
#                      local to the one guest kernel, so it goes via lo, which
#                      is fine for an out-of-band channel).
#   kernel_cm_off      removes /dev/infiniband/rdma_cm (the kernel's rdma_cm,
#                      librdmacm's only way in) and checks that librdmacm now
#                      fails at rdma_create_event_channel (cm_events --probe).
#   kernel_cm_probe    prints what rdma_create_event_channel does now.
#
# Both need root (the lab runs its command as root) and write only to the
# guest's throw-away overlay. They need $CM_EVENTS (the cm_events binary) for
# the probe; rdmacm_common.sh sets it.

MGMT_IP0=10.77.0.1
MGMT_IP1=10.77.0.2
MGMT_NET_DONE=

mgmt_net_up() {
  [[ -n $MGMT_NET_DONE ]] && return 0
  if ! ip link show mgmt0 >/dev/null 2>&1; then
    ip link add mgmt0 address 02:00:0a:4d:00:01 type veth \
      peer name mgmt1 address 02:00:0a:4d:00:02 || { echo "mgmt_net: ip link add failed"; return 1; }
    ip addr add "$MGMT_IP0/24" dev mgmt0 || return 1
    ip addr add "$MGMT_IP1/24" dev mgmt1 || return 1
    ip link set mgmt0 up || return 1
    ip link set mgmt1 up || return 1
  fi
  # No RDMA device may sit on the management netdevs.
  if rdma link show 2>/dev/null | grep -qE "netdev mgmt[01]( |$)"; then
    echo "mgmt_net: an rdma link uses mgmt0/mgmt1:"; rdma link show
    return 1
  fi
  # TCP between the two addresses (a listener on 10.77.0.1, a client bound
  # to 10.77.0.2), bounded.
  local out
  if ! out=$(timeout 20 /usr/bin/python3 - "$MGMT_IP0" "$MGMT_IP1" <<'EOF' 2>&1
import socket, sys
srv = socket.socket(); srv.bind((sys.argv[1], 0)); srv.listen(1)
port = srv.getsockname()[1]
cli = socket.socket(); cli.bind((sys.argv[2], 0)); cli.settimeout(5)
cli.connect((sys.argv[1], port))
conn, peer = srv.accept()
cli.sendall(b"mgmt")
assert conn.recv(4) == b"mgmt"
print("tcp %s -> %s:%d ok" % (peer[0], sys.argv[1], port))
EOF
  ); then
    echo "mgmt_net: TCP between $MGMT_IP1 and $MGMT_IP0 does not work: $out"
    return 1
  fi
  echo "mgmt_net: mgmt0 $MGMT_IP0, mgmt1 $MGMT_IP1, no rdma link on them; $out"
  MGMT_NET_DONE=1
}

kernel_cm_probe() { "$CM_EVENTS" --probe 2>&1; }

kernel_cm_off() {
  rm -f /dev/infiniband/rdma_cm
  [[ ! -e /dev/infiniband/rdma_cm ]] || { echo "kernel_cm_off: /dev/infiniband/rdma_cm still there"; return 1; }
  local out
  out=$(kernel_cm_probe)
  case $out in
    *"rdma_create_event_channel failed"*)
      echo "kernel_cm_off: /dev/infiniband/rdma_cm removed; native librdmacm: $out" ;;
    *)
      echo "kernel_cm_off: librdmacm still works without /dev/infiniband/rdma_cm: $out"
      return 1 ;;
  esac
}
