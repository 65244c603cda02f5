#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools_json_unit.sh BUILD_DIR SOURCE_DIR: the JSON the tools print without a
# device, checked against docs/schemas/ with the jsonschema library
# (tests/schemas/check_json.py): qp-validate on two endpoints, a dump alone,
# traces and --list-rules; qp-info --json (no device here: the error
# document); the codec's own output (the documented example and the fuzz
# seeds it regenerates). And the other way: files in the older vocabulary and
# a document without schema_version must be refused, so the check can fail.
set -uo pipefail
build=${1:?usage: tools_json_unit.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: tools_json_unit.sh BUILD_DIR SOURCE_DIR}
source "$src/tools/lab/skip_or_fail.sh"
python3 -c 'import jsonschema' 2>/dev/null || skip_or_fail "python3-jsonschema is not installed"
check() { "$src/tests/schemas/check_json.py" "$src/docs/schemas" "$@"; }
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
fail=0
run() {  # run NAME CMD...: stdout to $out/NAME.json (any exit status)
  local name=$1; shift
  "$@" >"$out/$name.json" 2>"$out/$name.err"
  [[ -s $out/$name.json ]] || { echo "FAIL: $name printed nothing on stdout"; cat "$out/$name.err"; fail=1; }
}
v=$build/tools/qp-validate/qp-validate
td=$src/tests/testdata
run pair_clean "$v" --json "$td/validate/rc_clean_a.json" "$td/validate/rc_clean_b.json"
run pair_broken "$v" --json "$td/validate/rc_broken_a.dump.json" "$td/validate/rc_broken_b.dump.json"
run dump_alone "$v" --json "$td/validate/rc_pkey_index_a.dump.json"
run traces_mtu "$v" --json "$td/trace/rc_m1024_client.json" "$td/trace/rc_m512_server.json"
run traces_gid "$v" --json "$td/trace/rc_badgid_client.json" "$td/trace/rc_badgid_server.json"
run traces_ud "$v" --json "$td/trace/ud_client.json" "$td/trace/ud_server.json"
run rules "$v" --list-rules --json
check qp-validate.schema.json "$out"/pair_*.json "$out"/dump_alone.json "$out"/traces_*.json "$out"/rules.json || fail=1

run qp_info "$build/tools/qp-info/qp-info" --json
check qp-info.schema.json "$out/qp_info.json" || fail=1

check endpoint.schema.json "$td/oob/example_endpoint.json" "$src"/oob/fuzz/corpus/dump*.json \
  "$src/oob/fuzz/corpus/rc.json" || fail=1

# A RoCE v2 GID with its address's prefix length (GidEntry.prefix_length, as
# the codec writes it for a dump on a RoCE port): taken at 24, refused past 128.
python3 - "$td/oob/example_endpoint.json" "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["gid_table"][0] if "gid_table" in d else d["local"]["endpoint"]["gid_table"][0]
e["prefix_length"] = 24
json.dump(d, open(sys.argv[2] + "/prefix_ok.json", "w"))
e["prefix_length"] = 129
json.dump(d, open(sys.argv[2] + "/prefix_bad.json", "w"))
PY
check endpoint.schema.json "$out/prefix_ok.json" || fail=1
check endpoint.schema.json --expect-invalid "$out/prefix_bad.json" ||
  { echo "FAIL: the schema took a prefix length of 129"; fail=1; }

# Refusals: the older Protobuf vocabulary (still read, no longer written) and
# a document without its schema_version.
check endpoint.schema.json --expect-invalid "$td/oob/example_endpoint_proto_names.json" \
  "$td/validate/rc_clean_a.dump.json" || { echo "FAIL: the schema took the older vocabulary"; fail=1; }
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["schema_version"]; print(json.dumps(d))' \
  "$out/pair_clean.json" >"$out/no_version.json"
check qp-validate.schema.json --expect-invalid "$out/no_version.json" ||
  { echo "FAIL: a document without schema_version passed"; fail=1; }
exit "$fail"
