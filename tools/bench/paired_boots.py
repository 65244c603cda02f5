#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pools tools/bench/start.sh runs from several boots: the paired N = 1 figure.

Usage: tools/bench/paired_boots.py [--kind connect] [--seed S] RUN_OUTPUT...

Each RUN_OUTPUT is the saved output of one `tools/bench/start.sh` run (one lab
boot; save it with `| tee FILE`). From each, the `RESULT KIND cmtime ... all:`
list and every `RESULT KIND BINARY ... all:` list: round i of cmtime and round
i of a binary are a pair (start.sh interleaves them). A round where either
failed ("x") is left out, as start.sh leaves it out. Printed per binary: the
pooled number of pairs, the median over them of cmtime's wall over ours (above
1: ours faster), in how many ours was faster, and a bootstrap 95 % interval of
that median (10,000 resamples of the pooled pairs, seeded: the same input
gives the same interval). Exit status 2 on bad usage or a file with no
RESULT lines of that kind.
"""
import argparse
import random
import re
import statistics
import sys

LINE = re.compile(r"^RESULT (\S+) (\S+) .* all: (.*)$")


def read_run(path, kind):
    """{binary: [ms or None]} of one run, 'cmtime' included."""
    lists = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = LINE.match(line.strip())
            if m and m.group(1) == kind:
                lists[m.group(2)] = [None if v == "x" else float(v) for v in m.group(3).split()]
    return lists


def pairs(cm, ours):
    return [c / o for c, o in zip(cm, ours) if c is not None and o is not None and o > 0]


def bootstrap(ratios, seed, resamples=10000):
    rng = random.Random(seed)
    n = len(ratios)
    meds = sorted(statistics.median(rng.choices(ratios, k=n)) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", default="connect")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args(argv)
    pooled = {}
    for path in a.runs:
        try:
            lists = read_run(path, a.kind)
        except OSError as e:
            print(f"paired_boots.py: {path}: {e.strerror}", file=sys.stderr)
            return 2
        if "cmtime" not in lists:
            print(f"paired_boots.py: {path}: no 'RESULT {a.kind} cmtime ... all:' line", file=sys.stderr)
            return 2
        for binary, walls in lists.items():
            if binary != "cmtime":
                pooled.setdefault(binary, []).extend(pairs(lists["cmtime"], walls))
    for binary, ratios in pooled.items():
        if not ratios:
            print(f"{binary}: no pair where both ran")
            continue
        lo, hi = bootstrap(ratios, a.seed)
        faster = sum(1 for r in ratios if r > 1)
        print(f"{binary}: {len(ratios)} pairs from {len(a.runs)} run(s), paired median "
              f"{statistics.median(ratios):.3f} x (cmtime wall / ours), ours faster in {faster}, "
              f"bootstrap 95 % interval {lo:.3f}-{hi:.3f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
