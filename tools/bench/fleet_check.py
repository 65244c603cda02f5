#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fleet_check.py TRUTH VERDICT: qp-validate --json on a fleet_gen job, against
fleet_gen's truth.json (tools/bench/fleet.sh, docs/inspect.md "Scale").

Counts, from the verdict (one pair and one finding per line, as qp-validate
writes them):
  pairs        how many, how many with the wrong peer (the truth's wiring),
               how many matched uniquely
  accused      pairs judged not sound with no planted fault on either side,
               and error/warning findings naming no QP of a fault or its peer
  faults       each planted fault: how many of its QPs an expected rule names
  summary      whether the job summary names each fault's host (and pid)
Exit 0 when every pair has its true peer, nothing healthy is accused and every
fault is found in full; 1 otherwise, with or without destination addresses
(every fault must be named either way; an --allow-ambiguous option is
accepted and ignored).
"""
import json
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__)
        return 2
    truth = json.load(open(args[0]))
    n, base = truth["hosts"], truth["qpn_base"]

    def host_index(name):
        return int(name.split("-")[1])

    def partner(host, qpn):
        h, k = host_index(host), qpn - base
        o = 1 + (k // 2) % (n - 1)
        ph = (h + o) % n if k % 2 == 0 else (h - o) % n
        return ("node-%04d" % ph, base + (k ^ 1))

    involved = {}  # (host, qpn) -> fault kind
    for f in truth["faults"]:
        for q in f["qps"] + f["peers"]:
            involved[(q["host"], q["qpn"])] = f["kind"]

    pairs = wrong = unique = unsound = accused_pairs = 0
    findings = []
    without = {"dangling": 0, "unpaired": 0, "ambiguous": 0}
    ambiguous = set()
    summary = None
    section = None
    with open(args[1]) as verdict:
        for line in verdict:
            if line.startswith('"pairs": ['):
                section = "pairs"
                continue
            if line.startswith('"live_findings": ['):
                section = "findings"
                continue
            if line.startswith('"without_peer": ['):
                section = "without"
                continue
            if line.startswith('"job_summary": '):
                summary = json.loads(line[len('"job_summary": '):].rstrip().rstrip(","))
                continue
            if not line.startswith("{") or section is None:
                if line.startswith("]"):
                    section = None
                continue
            item = json.loads(line.rstrip().rstrip(","))
            if section == "pairs":
                pairs += 1
                a = (item["a"]["host"], item["a"]["qpn"])
                b = (item["b"]["host"], item["b"]["qpn"])
                if partner(*a) != b:
                    wrong += 1
                unique += 1 if item.get("unique") else 0
                if not item["sound"]:
                    unsound += 1
                    if a not in involved and b not in involved:
                        accused_pairs += 1
                        if accused_pairs <= 5:
                            print("accused healthy pair:", a, b, item["progress"])
            elif section == "findings":
                findings.append(item)
            elif section == "without":
                without[item["status"]] += 1
                if item["status"] == "ambiguous":
                    ambiguous.add((item["qp"]["host"], item["qp"]["qpn"]))

    accused_findings = 0
    named = {}  # (host, qpn) -> set of rule ids naming it
    for f in findings:
        if f["severity"] == "info":
            continue
        sides = [(f["qp"]["host"], f["qp"]["qpn"])]
        if f.get("peer"):
            sides.append((f["peer"]["host"], f["peer"]["qpn"]))
        for s in sides:
            named.setdefault(s, set()).add(f["id"])
        if not any(s in involved for s in sides):
            accused_findings += 1
            if accused_findings <= 5:
                print("accused healthy QP:", sides, f["id"], f["message"][:120])

    ok = wrong == 0 and accused_pairs == 0 and accused_findings == 0
    print("pairs: %d (%d unique, %d best of several), %d with the wrong peer, %d not sound"
          % (pairs, unique, pairs - unique, wrong, unsound))
    print("without a peer: %d dangling, %d unpaired, %d ambiguous (not judged)"
          % (without["dangling"], without["unpaired"], without["ambiguous"]))
    print("accused: %d healthy pairs judged not sound, %d error/warning findings on healthy QPs"
          % (accused_pairs, accused_findings))
    culprit_text = " | ".join(c["text"] for c in (summary or {}).get("culprits", []))
    for f in truth["faults"]:
        rules = set(f["rules"])
        # A killed process's QPs are gone: its peers carry the finding.
        sides = f["peers"] if f["kind"] == "killed" else f["qps"]
        keys = [(q["host"], q["qpn"]) for q in sides]
        found = sum(1 for k in keys if named.get(k, set()) & rules)
        amb = sum(1 for k in keys if k in ambiguous)
        host = f["qps"][0]["host"]
        in_summary = host in culprit_text
        complete = found == len(keys) and in_summary
        print("fault %-9s %s: %d of %d QPs named by %s%s; summary %s"
              % (f["kind"], f["what"], found, len(keys), "/".join(sorted(rules)),
                 " (%d ambiguous)" % amb if amb else "",
                 "names " + host if in_summary else "does not name " + host))
        if not complete:
            ok = False
    if summary:
        for c in summary["culprits"][:6]:
            print("  summary:", c["text"])
    print("fleet_check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
