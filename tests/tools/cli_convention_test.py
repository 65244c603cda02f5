#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One CLI convention across the tools (docs/cli.md), checked on the built
binaries against the sources:

- a short option letter means one thing: the same long option in every
  tool's --help (the table of every letter is printed);
- --version prints the tool's version, the library's, the endpoint wire
  format's and the qpcm protocol's, equal to the constants in the sources;
- docs/cli.md's table of short options is that one meaning per letter;
- the "Exit status:" section of --help is lines of exit_codes.h's table
  (kExitStatuses), word for word, and lists every status the tool's own
  sources can exit with (a kExit name, or a row of kExitTable for each
  ExitStage they name; for a tool directory with two binaries, qp-inspect
  and qp-inspect-mpi, the two together).

Usage: cli_convention_test.py SOURCE_DIR TOOL_BINARY...
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

src = sys.argv[1]
binaries = sys.argv[2:]
failures = []


def fail(msg):
    failures.append(msg)


def read(path):
    with open(os.path.join(src, path), encoding="utf-8") as f:
        return f.read()


def run(binary, arg):
    # MPI tools run as a singleton: keep Open MPI quiet and local.
    env = dict(os.environ, OMPI_MCA_btl="self", OMPI_MCA_plm="isolated",
               OMPI_MCA_rmaps_base_oversubscribe="1", PRTE_MCA_plm="isolated")
    p = subprocess.run([binary, arg], capture_output=True, text=True, timeout=60, env=env)
    if p.returncode != 0:
        fail(f"{os.path.basename(binary)} {arg}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


# --- the sources' facts --------------------------------------------------------
exit_h = read("tools/common/exit_codes.h")
codes = {m[1]: int(m[2]) for m in re.finditer(r"\b(kExit\w+) = (\d+),", exit_h)}
table = {codes[m[1]]: m[2] for m in re.finditer(r'\{(kExit\w+), "([^"]*)"\}', exit_h)}
rows = {}  # ExitStage name -> statuses of its kExitTable row
for line in exit_h.splitlines():
    m = re.search(r"//\s*(k\w+)\s*$", line)
    if m and re.match(r"\s*(Uniform|ExitRow)", line):
        rows[m[1]] = {codes[n] for n in re.findall(r"\b(kExit\w+)\b", line)}
# ExitStatus()'s own cells (exit_codes.cc): kPath's port is 3, no path 8.
rows["kPath"] |= {codes["kExitNoDevice"], codes["kExitNoPath"]}
if len(table) < 11 or len(rows) < 10:
    fail(f"could not read exit_codes.h: {len(table)} statuses, {len(rows)} stages")

project = re.search(r"project\(qpconnect VERSION (\d+\.\d+\.\d+)", read("CMakeLists.txt"))[1]
codec = read("oob/include/qpconnect/oob/codec.h")
wire = "%s.%s" % (re.search(r"kWireVersion = (\d+)", codec)[1],
                  re.search(r"kWireMinorVersion = (\d+)", codec)[1])
qpcm = re.search(r"kProtocolVersion = (\d+)",
                 read("rdmacm/include/qpconnect/rdmacm/protocol_version.h"))[1]


def source_statuses(tool_dir):
    """Statuses the sources of tools/TOOL_DIR can exit with."""
    text = ""
    d = os.path.join(src, "tools", tool_dir)
    for name in sorted(os.listdir(d)):
        if name.endswith(".cc"):
            text += read(os.path.join("tools", tool_dir, name))
    if "RunLauncher" in text:
        text += read("tools/common/launch.cc")
    found = set()
    for n in re.findall(r"\b(kExit\w+)\b", text):
        if n in codes:
            found.add(codes[n])
    for stage in re.findall(r"ExitStage::(k\w+)", text):
        found |= rows.get(stage, set())
    return found


# --- each tool -------------------------------------------------------------------
letters = defaultdict(lambda: defaultdict(list))  # letter -> long option -> tools
listed_by_dir = defaultdict(set)
option_line = re.compile(r"^  ((?:-[A-Za-z0-9], )+)--([a-z0-9-]+)")
for binary in binaries:
    tool = os.path.basename(binary)
    help_text = run(binary, "--help")
    for line in help_text.splitlines():
        m = option_line.match(line)
        if m:
            for letter in re.findall(r"-([A-Za-z0-9])", m[1]):
                letters[letter][m[2]].append(tool)

    version = run(binary, "--version").splitlines()
    want1 = f"{tool} (qpconnect) {project}"
    want2 = (f"Library libqpconnect {project}, endpoint wire format {wire}, "
             f"out-of-band frame \\d+, qpcm protocol {qpcm}\\.")
    if len(version) != 2 or version[0] != want1 or not re.fullmatch(want2, version[1]):
        fail(f"{tool} --version prints {version!r}, not [{want1!r}, /{want2}/]")

    lines = help_text.splitlines()
    if "Exit status:" not in lines:
        fail(f"{tool} --help has no 'Exit status:' section")
        continue
    section = lines[lines.index("Exit status:") + 1:]
    listed = set()
    for line in section:
        if not line.strip():
            break
        m = re.fullmatch(r"  (\d+) +(.+)", line)
        if not m:
            fail(f"{tool} --help: '{line}' is not a line of the exit status table")
            continue
        status = int(m[1])
        listed.add(status)
        if table.get(status) != m[2]:
            fail(f"{tool} --help: exit {status} '{m[2]}' is not exit_codes.h's "
                 f"'{table.get(status, '(no such status)')}'")
    tool_dir = "qp-inspect" if tool == "qp-inspect-mpi" else tool
    listed_by_dir[tool_dir] |= listed

built_tools = {os.path.basename(b) for b in binaries}
for tool_dir, listed in sorted(listed_by_dir.items()):
    missing = source_statuses(tool_dir) - listed
    if tool_dir == "qp-inspect" and "qp-inspect-mpi" not in built_tools:
        missing.discard(codes["kExitExchange"])  # only qp-inspect-mpi's (a build without MPI)
    if missing:
        fail(f"tools/{tool_dir} can exit with {sorted(missing)}, which its --help does not list")

print("short options across %d tools:" % len(binaries))
for letter in sorted(letters, key=lambda c: (c.lower(), c)):
    meanings = letters[letter]
    print("  -%s  %s" % (letter, "; ".join(f"--{o} ({', '.join(t)})" for o, t in sorted(meanings.items()))))
    if len(meanings) > 1:
        fail(f"-{letter} means {len(meanings)} things: " + ", ".join("--" + o for o in meanings))

# docs/cli.md's letter table: "| `-a` | `--all` | `-l` | `--list` |" rows.
documented = {}
for row in re.findall(r"^ *\|((?: `-[A-Za-z]`(?:, `-[A-Za-z]`)* \| `--[a-z0-9-]+` \|)+) *$",
                      read("docs/cli.md"), re.M):
    for letters_cell, option in re.findall(r"((?:`-[A-Za-z]`(?:, )?)+) \| `--([a-z0-9-]+)`", row):
        for letter in re.findall(r"`-([A-Za-z])`", letters_cell):
            documented[letter] = option
built = {letter: next(iter(m)) for letter, m in letters.items() if len(m) == 1}
if documented != built:
    fail("docs/cli.md's short option table %s is not the tools' %s" %
         (sorted(documented.items()), sorted(built.items())))

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"ok: {len(binaries)} tools, {len(letters)} short letters with one meaning each, "
      f"--version with the four versions, exit sections from exit_codes.h")
