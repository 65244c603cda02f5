#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_json.py SCHEMA_DIR SCHEMA FILE...: validates each FILE (a JSON
document; '-' reads standard input; --lines: one document per line) against
SCHEMA (a file name in SCHEMA_DIR, e.g. qp-info.schema.json) with the
jsonschema library (Debian python3-jsonschema), resolving the schemas'
references to each other inside SCHEMA_DIR. Prints one line per document and
every violation with its path; exits 1 if any document fails, 2 on bad usage.
With --expect-invalid it exits 0 only if every document FAILS (to prove the
schema can refuse)."""
import json
import os
import sys
import warnings

import jsonschema

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: deprecated in 4.18, kept for 4.10


def load_store(schema_dir):
    store = {}
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name)) as f:
                schema = json.load(f)
            jsonschema.Draft202012Validator.check_schema(schema)
            store[schema["$id"]] = schema
    return store


def documents(path, lines):
    text = sys.stdin.read() if path == "-" else open(path).read()
    if not lines:
        yield path, json.loads(text)
        return
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield "%s:%d" % (path, n), json.loads(line)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    lines = "--lines" in argv
    expect_invalid = "--expect-invalid" in argv
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_dir, schema_name, files = args[0], args[1], args[2:]
    store = load_store(schema_dir)
    with open(os.path.join(schema_dir, schema_name)) as f:
        schema = json.load(f)
    resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema, store=store)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    failed = checked = 0
    for path in files:
        for where, doc in documents(path, lines):
            checked += 1
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            if errors:
                failed += 1
                print("%s: INVALID against %s" % (where, schema_name))
                for e in errors[:10]:
                    print("  at /%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message[:300]))
            else:
                print("%s: valid against %s" % (where, schema_name))
    if checked == 0:
        print("no document checked", file=sys.stderr)
        return 1
    if expect_invalid:
        return 0 if failed == checked else 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
