#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each rank's stdout from `mpirun --tag-output`, one line per rank, by rank.

mpirun --tag-output prefixes every line with "[JOB,RANK]<stdout>:" and cuts
long lines into 1024-byte pieces; a rank that prints one JSON document per
line (qp-mesh --json) gets it back whole.  Used by tests/integration/
mesh_lab.sh and tools/bench/mesh.sh.

Usage: mpi_rank_output.py MPIRUN_OUTPUT > ONE_LINE_PER_RANK
"""
import re
import sys


def main(path):
    parts = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"\[\d+,(\d+)\]<stdout>:(.*)", line.rstrip("\n"))
            if m:
                parts.setdefault(int(m.group(1)), []).append(m.group(2))
    for rank in sorted(parts):
        print("".join(parts[rank]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
