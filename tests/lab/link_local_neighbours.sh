# SPDX-License-Identifier: MIT
# Sourced by lab scripts (bash, inside tools/lab/lab-run, as root): needs
# QPC_NETDEV0/1.
#
# The link-local GIDs' IPv6 neighbours, made as the lab makes its IPv4 ones
# (tools/lab/guest-setup-rxe: no neighbour discovery between two addresses
# of one kernel; fixed MACs): once both addresses have left DAD's tentative
# state, a permanent entry for each on the other netdev. Without it, RTR to
# a link-local dgid failed once in four runs here with ETIMEDOUT resolving
# the neighbour (the fault of issue 31 item 2, not of the GID choice).
link_local_neighbours() {
  local i ll0 ll1
  for ((i = 0; i < 50; i++)); do
    [[ -z $(ip -6 addr show tentative dev "$QPC_NETDEV0") &&
      -z $(ip -6 addr show tentative dev "$QPC_NETDEV1") ]] && break
    sleep 0.1
  done
  ll0=$(ip -6 -o addr show scope link dev "$QPC_NETDEV0" | awk '{sub("/.*", "", $4); print $4}')
  ll1=$(ip -6 -o addr show scope link dev "$QPC_NETDEV1" | awk '{sub("/.*", "", $4); print $4}')
  ip -6 neigh replace "$ll1" lladdr "$(cat "/sys/class/net/$QPC_NETDEV1/address")" \
    dev "$QPC_NETDEV0" nud permanent &&
    ip -6 neigh replace "$ll0" lladdr "$(cat "/sys/class/net/$QPC_NETDEV0/address")" \
      dev "$QPC_NETDEV1" nud permanent
}
