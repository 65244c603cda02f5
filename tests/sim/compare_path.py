#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares qp-info --path --json with saquery -p's "PathRecord dump".

Usage: compare_path.py LABEL OURS_JSON_FILE SAQUERY_DUMP_FILE
saquery prints the raw fields (mtu 0x84 = selector 2, code 4); each is rebuilt
from our decoded fields and compared. Exit 0 if all are equal and saquery
printed exactly one record.
"""
import ipaddress
import json
import sys

label, ours_file, theirs_file = sys.argv[1:4]
ours = json.load(open(ours_file))["path"]
records = []
for line in open(theirs_file):
    line = line.strip()
    if line.startswith("PathRecord dump"):
        records.append({})
    elif "..." in line and records:
        name, value = line.split("...", 1)
        records[-1][name] = value.lstrip(".")
if len(records) != 1:
    print(f"{label}: saquery printed {len(records)} records, want 1", file=sys.stderr)
    sys.exit(1)
t = records[0]


def num(v):
    return int(v, 0)


checks = [
    ("service_id", num(t["service_id"]), num(ours["service_id"])),
    ("dgid", ipaddress.ip_address(t["dgid"]), ipaddress.ip_address(ours["dgid"])),
    ("sgid", ipaddress.ip_address(t["sgid"]), ipaddress.ip_address(ours["sgid"])),
    ("dlid", num(t["dlid"]), ours["dlid"]),
    ("slid", num(t["slid"]), ours["slid"]),
    ("hop_flow_raw", num(t["hop_flow_raw"]),
     (int(ours["raw_traffic"]) << 31) | (ours["flow_label"] << 8) | ours["hop_limit"]),
    ("tclass", num(t["tclass"]), ours["traffic_class"]),
    ("num_path_revers", num(t["num_path_revers"]),
     (int(ours["reversible"]) << 7) | ours["numb_path"]),
    ("pkey", num(t["pkey"]), num(ours["pkey"])),
    ("qos_class", num(t["qos_class"]), ours["qos_class"]),
    ("sl", num(t["sl"]), ours["sl"]),
    ("mtu", num(t["mtu"]), (ours["mtu_selector"] << 6) | ours["mtu_code"]),
    ("rate", num(t["rate"]), (ours["rate_selector"] << 6) | ours["rate"]),
    ("pkt_life", num(t["pkt_life"]),
     (ours["packet_lifetime_selector"] << 6) | ours["packet_lifetime"]),
    ("preference", num(t["preference"]), ours["preference"]),
]
bad = [(n, a, b) for n, a, b in checks if a != b]
for n, a, b in bad:
    print(f"{label}: {n}: saquery {a}, qp-info {b}", file=sys.stderr)
if not bad:
    print(f"{label}: {len(checks)} fields equal (dlid {ours['dlid']}, mtu {ours['mtu']}, "
          f"rate {ours['rate_gbps']} Gb/s, sl {ours['sl']}, pkey {ours['pkey']}, "
          f"packet_lifetime {ours['packet_lifetime']})")
sys.exit(1 if bad else 0)
