#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the docs name exists in the code (issue 40).

Checks every doc given, against the source tree as it is when the test runs
(nothing here is a copied list, so a renamed option or variable fails the
docs that still name the old one):

  flag     every `--option` named is a string in some tool's source (tools/,
           what --help prints is built from its option tables; also the
           scripts of tests/package/ and tests/docs/), or an option of a program
           that is not ours (EXTERNAL below, by program);
  env      every QPCM_*, QPCONNECT_*, QPC_* variable named occurs in a source
           file outside docs/ (a name ending in _* is a prefix);
  status   every exit status named ("exit 5", "exits 0 or 1", "exit status
           130/143") is a kExit* constant of tools/common/ (exit_codes.h, and
           launch.h's 126/127), 128 + SIGINT/SIGTERM (130, 143), or one of
           the lab harness's (tools/lab/lab-run, lab-test: kHarness=125 ...);
  path     every repository path in backquotes and every relative link
           exists (doc_paths.py);
  outside  no relative link (from the doc's folder) and no backquoted
           ../page.md or ../docs/ path (from the repository's root) leads
           outside the repository, and no backquoted absolute path names
           /work or /home (a reader has only the repository);
  anchor   every heading link, [..](file.md#anchor) or [..](#anchor), names a
           heading of that page (GitHub's anchors: lower case, punctuation
           dropped, spaces to '-', repeats -1, -2);
  csig     every C API call or declaration quoted (qpc_name(...)) names a
           function of capi/include/qpconnect/qpconnect.h with as many
           parameters (qpc_name() alone only names it; the build's CMake
           functions, qpc_tool() ..., are not C); a quoted declaration (types and names) must equal the
           header's, whitespace aside.

Code blocks count like prose (examples name flags too). A line may opt out
of one check for a reason with `<!-- doc-facts: not-ours -->` (e.g. a
stock program's output quoted).

Usage: doc_facts.py SOURCE_DIR DOC...
Exit status: 0 all found, 1 some not (each printed as FAIL: doc:line: ...),
2 bad usage.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_paths  # noqa: E402

# Options of programs that are not ours, by program, as the docs use them.
EXTERNAL = {
    "cmake": ["--build", "--install", "--target", "--prefix", "--preset", "--parallel"],
    "ctest": ["--test-dir", "--output-on-failure", "--timeout", "--repeat", "--show-only"],
    "cpack": ["--config"],
    "gtest": ["--gtest_filter", "--gtest_also_run_disabled_tests", "--gtest_repeat"],
    "mpirun": ["--oversubscribe", "--host", "--mca", "--bind-to", "--map-by", "--allow-run-as-root"],
    "perftest": ["--tos", "--report_gbits", "--run_infinitely", "--size", "--iters", "--rdma_cm"],
    "rping/cmtime/ucmatose": [],
    "apt/dpkg": ["--no-install-recommends", "--purge", "--yes"],
    "git": ["--oneline", "--depth"],
    "ip/ibv/ibstat": ["--json"],
    "valgrind/sanitizers": ["--leak-check", "--error-exitcode"],
    "python/pip": ["--version", "--help", "--user"],
    "qemu/ssh/scp": [],
    "env": ["--unset"],
    "pkg-config": ["--cflags", "--libs", "--static", "--modversion"],
    "srun": ["--jobid", "--overlap", "--ntasks-per-node", "--nodes"],
    "protoc": ["--cpp_out", "--decode", "--decode_raw"],
    "help2man (a placeholder)": ["--option"],
}

FLAG = re.compile(r"(?<![\w\-/.=])(--[a-z][a-z0-9_\-]*[a-z0-9])")
ENV = re.compile(r"(?<![A-Za-z0-9_])((?:QPCM|QPCONNECT|QPC)_[A-Z0-9_]*[A-Z0-9](?:_\*?)?)(?![a-z0-9])")
# An option of a tool's option table, what its --help prints:
# {'p', "port", true, ...} or {0, "psn", ...} or {"port", required_argument, ...}.
OPTION_ROW = re.compile(
    r"\{\s*(?:'.'|0)\s*,\s*\"([a-z][a-z0-9_\-]*)\"|\{\s*\"([a-z][a-z0-9_\-]*)\"\s*,\s*(?:no|required|optional)_argument"
)
# The lab harness's own statuses, named in its scripts: readonly kHarness=125.
LAB_STATUS = re.compile(r"\bk[A-Z]\w*=(\d+)")
STATUS = re.compile(
    r"\bexit(?:s|ed|ing)?(?:\s+(?:status|code|statuses|with))?\s+"
    r"(\d+(?:\s*(?:/|,|or|and|to)\s*\d+)*)\b"
)
CALL = re.compile(r"\b(qpc_[a-z0-9_]+)\s*\(")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\]\(([^)\s]*#[^)\s]+)\)")
OPT_OUT = "<!-- doc-facts: not-ours -->"
RELLINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
# A page or doc referred to by a ../ path (an install-relative library path,
# `../lib/qpconnect/`, is not a reference), or an absolute path of this host.
DOTDOT = re.compile(r"`((?:\.\./)+[^`\s]*(?:\.md|/docs/[^`\s]*)|/(?:work|home)/[^`\s]*)`")
HEADER = "capi/include/qpconnect/qpconnect.h"
SKIP_DIRS = {".git", "docs", "node_modules", "__pycache__"}


def source_files(src):
    """Every text file of the tree but docs/, *.md and build trees."""
    for root, dirs, files in os.walk(src):
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIP_DIRS
            and not d.startswith("build")
            and not os.path.exists(os.path.join(root, d, "CMakeCache.txt"))
        ]
        for f in files:
            if f.endswith((".md", ".png", ".gz", ".bin", ".pcap")):
                continue
            path = os.path.join(root, f)
            try:
                with open(path, encoding="utf-8") as h:
                    yield os.path.relpath(path, src), h.read()
            except (UnicodeDecodeError, OSError):
                continue


def known_names(src):
    flags, env, statuses = set(), set(), {128 + 2, 128 + 15}
    for e in EXTERNAL.values():
        flags.update(e)
    for rel, text in source_files(src):
        env.update(m.group(1) for m in ENV.finditer(text))
        ours = ("tools" + os.sep, os.path.join("tests", "package"), os.path.join("tests", "docs"))
        if rel.startswith(ours) and not rel.endswith("doc_facts.py"):
            flags.update(m.group(1) for m in FLAG.finditer(text))
            flags.update("--" + (m.group(1) or m.group(2)) for m in OPTION_ROW.finditer(text))
        if rel in (os.path.join("tools", "lab", "lab-run"), os.path.join("tools", "lab", "lab-test")):
            statuses.update(int(n) for n in LAB_STATUS.findall(text))
        if rel.startswith(os.path.join("tools", "common")) and rel.endswith(".h"):
            statuses.update(int(n) for n in re.findall(r"\bkExit\w*\s*=\s*(\d+)", text))
    return flags, env, statuses


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_args(args):
    """Top-level comma-separated parts of a parameter or argument list."""
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return [] if parts in ([], ["void"]) else parts


def norm(s):
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s*\*\s*", "* ", s)
    return re.sub(r"\s*([(),])\s*", r"\1", s).replace("* )", "*)").strip()


def header_functions(src):
    with open(os.path.join(src, HEADER), encoding="utf-8") as f:
        text = strip_c_comments(f.read())
    funcs = {}
    decl = re.compile(r"([A-Za-z_][\w\s\*]*?)\b(qpc_[a-z0-9_]+)\s*\(([^()]*)\)\s*;")
    for m in decl.finditer(text):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        if "typedef" in ret:
            continue
        ret = ret.strip().split("\n")[-1].strip()
        funcs[name] = (split_args(params), norm(f"{ret} {name}({params})"))
    return funcs


def cmake_function_names(src):
    names = set()
    for rel, text in source_files(src):
        if rel.endswith(("CMakeLists.txt", ".cmake")):
            names.update(re.findall(r"^\s*(?:function|macro)\((qpc_\w+)", text, flags=re.M))
    return names


def balanced_args(line, start):
    """The text between the '(' at start-1 and its match, or None."""
    depth = 1
    for i in range(start, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return line[start:i]
    return None


def is_declaration(args):
    """Parameters with types (`const qpc_x* name`), not a call's arguments."""
    return bool(args) and all(
        re.match(r"^(const\s+)?(struct\s+)?[a-z_][a-z0-9_]*\s*\**\s+\**[a-z_][a-z0-9_]*$", a)
        for a in args
    )


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"`", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache):
    if path not in cache:
        found, seen, fence = set(), {}, False
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError:
            lines = []
        for line in lines:
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = HEADING.match(line)
            if m and not fence:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            for a in re.findall(r'<a (?:name|id)="([^"]+)"', line):
                found.add(a)
        cache[path] = found
    return cache[path]


def check(src, docs):
    flags, env, statuses = known_names(src)
    funcs = header_functions(src)
    cmake_functions = cmake_function_names(src)
    env_prefixes = {e[:-1] for e in env}  # QPC_LAB_ -> any QPC_LAB_x known
    fails, cache = [], {}
    counts = dict.fromkeys(["flag", "env", "status", "anchor", "csig", "outside"], 0)
    root = os.path.realpath(src)
    for doc in docs:
        path = os.path.join(src, doc)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            if OPT_OUT in line:
                continue
            where = f"{doc}:{n}"
            for flag in FLAG.findall(line):
                counts["flag"] += 1
                if flag not in flags:
                    fails.append(f"{where}: flag {flag} is in no tool's source (tools/) nor EXTERNAL")
            for var in ENV.findall(line):
                counts["env"] += 1
                stem = var.rstrip("*")
                ok = any(k.startswith(stem) for k in env) if stem.endswith("_") else (
                    var in env or any(var.startswith(p) for p in env_prefixes if p.endswith("_")))
                if not ok:
                    fails.append(f"{where}: environment variable {var} occurs in no source file")
            for group in STATUS.findall(line):
                for num in re.findall(r"\d+", group):
                    counts["status"] += 1
                    if int(num) not in statuses:
                        fails.append(f"{where}: exit status {num} is not in tools/common/exit_codes.h")
            for target in RELLINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                counts["outside"] += 1
                full = os.path.realpath(os.path.join(os.path.dirname(path), target))
                if not (full == root or full.startswith(root + os.sep)):
                    fails.append(f"{where}: link ({target}) leads outside the repository")
            for word in DOTDOT.findall(line):
                counts["outside"] += 1
                # Backquoted paths are the repository root's: ../ leaves it.
                full = os.path.realpath(os.path.join(root, word))
                if word.startswith("/") or not full.startswith(root + os.sep):
                    fails.append(f"{where}: `{word}` is outside the repository")
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                counts["anchor"] += 1
                file, anchor = target.split("#", 1)
                page = os.path.join(os.path.dirname(path), file) if file else path
                if anchor not in anchors(page, cache):
                    fails.append(f"{where}: heading link ({target}) names no heading of {file or doc}")
            for m in CALL.finditer(line):
                name = m.group(1)
                args_text = balanced_args(line, m.end())
                if args_text is None:
                    continue
                counts["csig"] += 1
                if name in cmake_functions:
                    continue
                if name not in funcs:
                    fails.append(f"{where}: {name}() is not declared in {HEADER}")
                    continue
                params, decl = funcs[name]
                args = split_args(args_text)
                if args_text.strip() in ("", "...", "…"):
                    continue  # the function named, not called
                if len(args) != len(params):
                    fails.append(f"{where}: {name}() takes {len(params)} parameter(s) in {HEADER}, "
                                 f"the doc passes {len(args)}")
                elif is_declaration(args):
                    start = line.rfind(";", 0, m.start()) + 1
                    quoted = norm(line[start:m.end()] + args_text + ")").strip("`* ")
                    quoted = re.sub(r"^.*?(\b(?:const |struct |unsigned )*[a-z_][a-z0-9_]*\*? ?qpc_)",
                                    r"\1", quoted)
                    if quoted != decl:
                        fails.append(f"{where}: {name} declared as '{quoted}', the header says '{decl}'")
    return fails, counts


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, docs = argv[1], argv[2:]
    fails, counts = check(src, docs)
    for f in fails:
        print("FAIL: " + f)
    # Paths and relative links: the same check as docs/map.md's.
    rc = doc_paths.main([argv[0], src] + docs)
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    print(f"doc facts: {summary} checked, {len(fails)} not found")
    return 1 if fails or rc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
