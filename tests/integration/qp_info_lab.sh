#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-info in the lab: both devices listed, --json valid with the documented
# fields, each device's RoCE v2 IPv4-mapped GID at the index the lab reports.
set -euo pipefail
qp_info=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s%N)
"$qp_info" --json >"$out"
end=$(date +%s%N)
echo "qp-info --json took $(( (end - start) / 1000000 )) ms"
python3 - "$out" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
devs = {d["name"]: d for d in doc["devices"]}
for i in (0, 1):
    name = os.environ[f"QPC_DEV{i}"]
    gid_idx = int(os.environ[f"QPC_GID{i}"])
    ip = os.environ[f"QPC_IP{i}"]
    d = devs[name]
    for key in ("node_guid", "limits", "ports"):
        assert key in d, (name, key)
    for key in ("max_qp_rd_atom", "max_qp_init_rd_atom", "max_qp_wr", "max_sge"):
        assert d["limits"][key] > 0, (name, key)
    p = d["ports"][0]
    for key in ("state", "link_layer", "lid", "lmc", "sm_lid", "active_mtu", "max_mtu",
                "gids", "pkeys"):
        assert key in p, (name, key)
    assert p["state"] == "ACTIVE" and p["link_layer"] == "ethernet", p
    assert p["gid_tbl_len"] == 1024, p["gid_tbl_len"]
    g = {e["index"]: e for e in p["gids"]}[gid_idx]
    assert g["gid"] == "::ffff:" + ip and g["type"] == "roce-v2" and g["family"] == "ipv4", g
    assert g["netdev"] == os.environ[f"QPC_NETDEV{i}"], g
    assert p["netdev"] == os.environ[f"QPC_NETDEV{i}"], ("port netdev", p["netdev"])
    assert p["pkeys"][0] == {"index": 0, "pkey": "0xffff", "membership": "full"}, p["pkeys"]
    print(f"{name}: {len(p['gids'])} valid GIDs of {p['gid_tbl_len']}, "
          f"[{gid_idx}] {g['gid']} {g['type']} on {g['netdev']}")
PY
"$qp_info" -d "$QPC_DEV0" | grep -q "roce-v2"
# The port's netdev in the table (as `rdma link` shows it), and -l: the names.
"$qp_info" -d "$QPC_DEV0" | grep -q "port 1: ACTIVE.* netdev $QPC_NETDEV0" ||
  { echo "no 'netdev $QPC_NETDEV0' on the port line"; "$qp_info" -d "$QPC_DEV0" | head -3; exit 1; }
names=$("$qp_info" -l)
for d in "$QPC_DEV0" "$QPC_DEV1"; do
  grep -qx "$d" <<<"$names" || { echo "qp-info -l lacks $d: $names"; exit 1; }
done
"$qp_info" -l --json | python3 -c 'import json, sys; assert "'"$QPC_DEV1"'" in json.load(sys.stdin)["device_names"]' ||
  { echo "qp-info -l --json lacks $QPC_DEV1"; exit 1; }
set +e
"$qp_info" -d nosuchdev >/dev/null 2>&1; rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "qp-info -d nosuchdev exited $rc, want 3"; exit 1; }
echo ok
