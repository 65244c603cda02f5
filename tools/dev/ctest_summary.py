#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-label counts and times of a CTest run, for tools/dev/test.sh.

Usage: ctest_summary.py [--fail-on-skip] BUILD_DIR JUNIT_XML [BUILD_DIR JUNIT_XML ...]

Each JUNIT_XML is the --output-junit file of one `ctest --test-dir BUILD_DIR`
run; the tests' labels come from `ctest --test-dir BUILD_DIR
--show-only=json-v1`. Prints one row per label (a test with two labels counts
in both; a test without one under "(none)") and a total row:

  run       passed + failed: every test neither skipped nor disabled
  passed    exit status 0 (or what PASS_REGULAR_EXPRESSION accepts)
  failed    failed, timed out, or not started (no executable, a failed
            fixture): everything CTest itself counts as a failure
  skipped   SKIP_RETURN_CODE (77) or SKIP_REGULAR_EXPRESSION (a gtest case
            that called GTEST_SKIP): ran, proved nothing
  disabled  DISABLED tests (gtest's DISABLED_ measurements), never started
  time      the sum of the tests' own times (the JUnit `time` of each
            testcase, as CTest measured it: a lab test's includes its boot
            and any wait for another user's VM), as minutes and seconds

A test with two labels counts in both rows, so the rows add up to more than
the total. Under `ctest -j N` the total time is more than the wall time of the
run (test.sh prints that too).

Exit status: 0; 1 with --fail-on-skip when a test was skipped (test.sh
under CI=true or QPCONNECT_LAB_REQUIRED=1, where a skip proves nothing); 2
bad usage; 3 when the results cannot be read.
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

COLUMNS = ("run", "passed", "failed", "skipped", "disabled")


def labels_of(build_dir):
    out = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    labels = {}
    for test in json.loads(out).get("tests", []):
        names = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                names = list(prop.get("value") or [])
        labels[test["name"]] = names or ["(none)"]
    return labels


def outcome(case):
    """One junit <testcase> of CTest (3.25) -> one of COLUMNS[1:]."""
    status = case.get("status", "")
    if status == "run":
        return "passed"
    if status == "disabled":
        return "disabled"
    if status == "notrun":
        skipped = case.find("skipped")
        message = skipped.get("message", "") if skipped is not None else ""
        # CTest marks a skip by SKIP_RETURN_CODE=77 or SKIP_REGULAR_EXPRESSION_MATCHED;
        # any other "notrun" (Unable to find executable, a failed fixture) is
        # counted by CTest as a failure, and so here.
        if message.startswith("SKIP_"):
            return "skipped"
    return "failed"


def seconds_of(case):
    """A testcase's `time` attribute in seconds; 0 if absent or unreadable."""
    try:
        return max(0.0, float(case.get("time", "0")))
    except ValueError:
        return 0.0


def clock(seconds):
    """1234.5 -> '20m34.5s': minutes and seconds, to one decimal."""
    tenths = round(seconds * 10)
    return f"{tenths // 600}m{tenths % 600 / 10:04.1f}s"


def main(argv):
    fail_on_skip = len(argv) > 1 and argv[1] == "--fail-on-skip"
    if fail_on_skip:
        argv = argv[1:]
    if len(argv) < 3 or len(argv) % 2 == 0:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    rows = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    total = dict.fromkeys(COLUMNS, 0)
    times = defaultdict(float)
    total_time = 0.0
    for build_dir, junit in zip(argv[1::2], argv[2::2]):
        try:
            labels = labels_of(build_dir)
            cases = ET.parse(junit).getroot().iter("testcase")
        except (OSError, ET.ParseError, subprocess.CalledProcessError, ValueError) as e:
            print(f"ctest_summary: cannot read the results of {build_dir}: {e}", file=sys.stderr)
            return 3
        for case in cases:
            kind, took = outcome(case), seconds_of(case)
            names = labels.get(case.get("name"), ["(none)"])
            total_time += took
            for label in names:
                times[label] += took
            for row in [rows[label] for label in names] + [total]:
                row[kind] += 1
                if kind in ("passed", "failed"):
                    row["run"] += 1
    width = max([len("label"), len("total")] + [len(label) for label in rows])
    print(f"{'label':<{width}}  " + "  ".join(f"{c:>8}" for c in COLUMNS) + f"  {'time':>10}")
    for label in sorted(rows):
        print(f"{label:<{width}}  " + "  ".join(f"{rows[label][c]:>8}" for c in COLUMNS) +
              f"  {clock(times[label]):>10}")
    print(f"{'total':<{width}}  " + "  ".join(f"{total[c]:>8}" for c in COLUMNS) +
          f"  {clock(total_time):>10}")
    if fail_on_skip and total["skipped"]:
        print(f"ctest_summary: {total['skipped']} test(s) skipped where no skip is allowed",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
