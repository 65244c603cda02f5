#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit test of tools/dev/ctest_summary.py (CTest: ctest_summary_unit).

Runs the summary over fixtures/results.xml (CTest 3.25's --output-junit, one
testcase per outcome) with the labels of fixtures/CTestTestfile.cmake, and
checks the table: counts and summed times per label and in total, a test with
two labels in both rows, a test without one under "(none)", and the exit
statuses (--fail-on-skip, bad usage, unreadable results).

Usage: ctest_summary_test.py SOURCE_DIR
"""
import importlib.util
import pathlib
import shutil
import subprocess
import sys
import tempfile

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
summary = src / "tools/dev/ctest_summary.py"
fixtures = src / "tests/dev/fixtures"
failures = []


def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + (f"\n{detail}" if not ok and detail else ""))
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([sys.executable, str(summary), *args], capture_output=True, text=True)


WANT = """\
label        run    passed    failed   skipped  disabled        time
(none)         1         1         0         0         0     0m02.0s
lab            2         1         1         1         0    16m10.4s
rdmacm         1         1         0         0         0     1m01.3s
unit           3         1         2         0         1     0m01.8s
total          6         3         3         1         1    16m14.2s
"""

with tempfile.TemporaryDirectory() as tmp:
    build = pathlib.Path(tmp) / "build"
    build.mkdir()
    shutil.copy(fixtures / "CTestTestfile.cmake", build)
    results = str(fixtures / "results.xml")

    r = run(str(build), results)
    check("exit 0 without --fail-on-skip", r.returncode == 0, r.stderr)
    check("the table: counts and times per label, total", r.stdout == WANT,
          "got:\n" + r.stdout + "want:\n" + WANT)

    r = run("--fail-on-skip", str(build), results)
    check("--fail-on-skip: exit 1 with a skip", r.returncode == 1, r.stderr)
    check("--fail-on-skip: still prints the table", r.stdout == WANT, r.stdout)
    check("--fail-on-skip: says how many were skipped", "1 test(s) skipped" in r.stderr, r.stderr)

    r = run(str(build))
    check("bad usage: exit 2", r.returncode == 2, r.stderr)
    r = run(str(build), str(pathlib.Path(tmp) / "missing.xml"))
    check("unreadable results: exit 3", r.returncode == 3, r.stderr)

spec = importlib.util.spec_from_file_location("ctest_summary", summary)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
for seconds, text in ((0, "0m00.0s"), (59.96, "1m00.0s"), (4213.04, "70m13.0s")):
    check(f"clock({seconds}) == {text!r}", module.clock(seconds) == text, module.clock(seconds))

print("PASS" if not failures else f"FAIL: {len(failures)} check(s)")
sys.exit(1 if failures else 0)
