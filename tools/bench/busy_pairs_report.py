#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""busy_pairs_report.py DIR SNAPSHOTS: what busy_pairs.sh prints about its
snapshots (DIR/snapN.json) and their judgements (DIR/judgedN.json): the
verdict, the rules that fired, and for the first unsound pairs each QP's PSNs
in every sample, the evidence, and whether the pair moved in the next
snapshot. Exit status 0 when every pair of every snapshot was sound."""
import collections
import json
import sys

SHOWN = 3


def qp_key(q):
    return (q["device"], q["qpn"] if "qpn" in q else q["lqpn"])


def main():
    d, snaps = sys.argv[1], int(sys.argv[2])
    judged = [json.load(open(f"{d}/judged{s}.json")) for s in range(1, snaps + 1)]
    raw = [json.load(open(f"{d}/snap{s}.json")) for s in range(1, snaps + 1)]
    all_sound = True
    for s, (j, r) in enumerate(zip(judged, raw), 1):
        pairs = j["pairs"]
        unsound = [p for p in pairs if not p["sound"]]
        all_sound &= not unsound
        rules = collections.Counter(f["id"] for f in j["live_findings"]
                                    if f["severity"] != "info")
        at = [round(x["at_seconds"], 2) for x in r["samples"]]
        print(f"snapshot {s}: samples at {at} s; {len(pairs)} pairs, "
              f"{len(pairs) - len(unsound)} sound, {len(unsound)} not; "
              f"errors {j['summary']['errors']}, warnings {j['summary']['warnings']}; "
              f"rules: {dict(rules) or 'none'}")
        progress = collections.Counter(p["progress"].split(":")[0].split(" in ")[0]
                                       for p in pairs)
        print(f"  progress: {dict(progress)}")
        # Each QP's PSNs in every sample of this snapshot.
        psns = collections.defaultdict(list)
        for x in r["samples"]:
            for q in x["qps"]:
                psns[qp_key(q)].append((q["sq_psn"], q["rq_psn"]))
        nxt = judged[s] if s < snaps else None
        moving_next = set()
        if nxt:
            for p in nxt["pairs"]:
                if p["progress"].startswith("moving"):
                    moving_next.add((qp_key(p["a"]), qp_key(p["b"])))
        if unsound and nxt:
            later = sum((qp_key(p["a"]), qp_key(p["b"])) in moving_next for p in unsound)
            print(f"  of the {len(unsound)} unsound pairs, {later} are moving in snapshot {s + 1}")
        # One example of each rule first, then the next pairs up to SHOWN.
        shown, seen = [], set()
        for p in unsound:
            ids = {f["id"] for f in p["findings"] if f["severity"] != "info"} - seen
            if ids:
                shown.append(p)
                seen |= ids
        shown += [p for p in unsound if p not in shown][:max(0, SHOWN - len(shown))]
        for p in shown:
            a, b = p["a"], p["b"]
            print(f"  pair {a['device']} QP {a['qpn']} <-> {b['device']} QP {b['qpn']}: "
                  f"{p['progress']}")
            for q in (a, b):
                print(f"    {q['device']} QP {q['qpn']} (sq_psn, rq_psn) per sample: "
                      f"{psns[qp_key(q)]}")
            for f in p["findings"]:
                print(f"    {f['severity']} {f['id']}: {f['message']}")
                for e in f.get("evidence", []):
                    print(f"      evidence: {e}")
        if r["samples"]:
            first, last = r["samples"][0]["ports"], r["samples"][-1]["ports"]
            for p0, p1 in zip(first, last):
                rose = {k: p1["counters"][k] - v for k, v in p0["counters"].items()
                        if p1["counters"].get(k, v) != v}
                print(f"  port {p0['device']}/{p0['port']} counters that rose: {rose}")
    return 0 if all_sound else 1


if __name__ == "__main__":
    sys.exit(main())
