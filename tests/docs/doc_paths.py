#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every repository path a doc names in backquotes exists (docs/map.md).

A path is a backquoted word that starts with one of the tree's top-level
folders (qpconnect/, oob/, rdmacm/, tools/, tests/, docs/, ...) and holds no
space, wildcard or option: `qpconnect/src/verbs/qp_steps.cc`,
`tests/unit/observe/`. A word with a `*` (`rules_*.cc`) must match at least one
file; one with braces (`oob/fuzz/{codec,frame}_fuzzer.cc`) names each of its
expansions. A word under qpconnect/ that is not a repository path is an
include path and must exist under some folder's include/
(`qpconnect/connector.h` is `qpconnect/include/qpconnect/connector.h`).
Words under build/ name build outputs and are not checked. Relative links,
[text](file.md), are checked too, against the doc's own folder (the #anchor
dropped).

Usage: doc_paths.py SOURCE_DIR DOC...
Exit status: 0 every path exists, 1 some do not (each printed), 2 bad usage.
"""

import glob
import os
import re
import sys

BACKQUOTED = re.compile(r"`([^`\s]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def expand(word):
    """Brace expansion of one {a,b,...} group at a time."""
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    return [x for alt in m.group(1).split(",") for x in expand(word[: m.start()] + alt + word[m.end():])]


def exists(src, word):
    full = os.path.join(src, word)
    if glob.glob(full) if "*" in word else os.path.exists(full):
        return True
    # An include path: <folder>/include/<word>.
    return bool(glob.glob(os.path.join(src, "*", "include", word)))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, docs = argv[1], argv[2:]
    tops = {
        e + "/"
        for e in os.listdir(src)
        if os.path.isdir(os.path.join(src, e)) and not e.startswith((".", "build"))
    }
    missing, checked = [], 0
    for doc in docs:
        path = os.path.join(src, doc)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            for word in BACKQUOTED.findall(line):
                if not any(word.startswith(t) for t in tops):
                    continue
                checked += 1
                if not all(exists(src, w) for w in expand(word)):
                    missing.append(f"{doc}:{n}: `{word}` does not exist")
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                checked += 1
                rel = target.split("#", 1)[0]
                if not os.path.exists(os.path.join(os.path.dirname(path), rel)):
                    missing.append(f"{doc}:{n}: link ({target}) does not exist")
    for m in missing:
        print("FAIL: " + m)
    print(f"doc paths: {checked} checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
