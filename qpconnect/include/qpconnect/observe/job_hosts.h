// SPDX-License-Identifier: MIT
// The job's host list as the launcher gives it, so that a whole-job verdict
// can name every host that sent no snapshot (docs/inspect.md, "Every host
// accounted for"):
//   Slurm   SLURM_JOB_NODELIST, `scontrol show hostnames`' input:
//           "node[01-04,07],gpu-[1-2]" (a comma list; a bracket holds
//           numbers and ranges, zero-padded to the width written; several
//           brackets in one name multiply: "r[1-2]n[1-2]" is 4 hosts);
//   pdsh    -w: the same syntax;
//   mpirun  a hostfile: Open MPI's "node01 slots=8", MPICH's "node01:8", one
//           host a line, '#' comments.
// The lists are expanded in the order written, each name once.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect {

// More hosts than this in one list is refused (a typo such as
// "node[1-100000000]" would otherwise fill memory).
inline constexpr size_t kMaxJobHosts = 1000000;

// Expands a host list in Slurm's and pdsh's bracket syntax. Whitespace
// around a name is dropped; empty items (",,", a trailing comma) are
// skipped. kInvalidArgument, with a detail naming the fault and where it is
// ("node[01-04: '[' at column 5 is not closed"), for an unbalanced bracket,
// an empty bracket or range, a non-digit in a bracket, a reversed range
// ("node[4-1]: range 4-1 at column 6 goes down"), a number too large, or
// more than kMaxJobHosts names.
Result<std::vector<std::string>> ExpandHostList(std::string_view list);

// The hosts of an mpirun hostfile's text: the first word of each line
// (Open MPI's "host slots=N max_slots=M", MPICH's "host:N"), comments
// ('#' to the end of the line) and blank lines skipped; each name once.
// kInvalidArgument naming the line for a line whose first word is an
// option ("line 3: 'slots=4' is not a host name").
Result<std::vector<std::string>> ParseHostfile(std::string_view text);

// The hosts of `list` (ExpandHostList) and of the hostfile at
// `hostfile_path` (ParseHostfile), each when given, together, each name once;
// what the tools' --hosts and --hostfile give. The Error's operation is
// "host list" or "hostfile" (which one is wrong), its detail names the list
// or the file and the fault: kInvalidArgument, or kIo for a file that cannot
// be read.
Result<std::vector<std::string>> JobHostsOf(const std::optional<std::string>& list,
                                            const std::optional<std::string>& hostfile_path);

// The "hosts" of qp-inspect-mpi's job file (snapshot_json.h), empty when it
// has none. Read from the members before "snapshots" only, where the writer
// puts it: the snapshots themselves are not scanned. kProtocol for a file
// that is not a JSON object or a "hosts" that is not an array of strings.
Result<std::vector<std::string>> JobHostsFromJson(std::string_view text);
// The value of that "hosts" member (a JSON array of strings), each name once:
// the one parser of it, for JobHostsFromJson and the streamed job reader
// (ReadJobSnapshots). kProtocol (attribute "hosts") for anything else.
Result<std::vector<std::string>> JobHostsFromArray(std::string_view array);

// True when `a` and `b` name one host: equal, or equal up to the first '.'
// of either (a launcher's "node01" and the host's "node01.cluster"); IP
// addresses only when equal.
bool SameHostName(std::string_view a, std::string_view b);

// The names of `expected` none of `observed` names (SameHostName), in
// `expected`'s order.
std::vector<std::string> HostsNotIn(const std::vector<std::string>& expected,
                                    const std::vector<std::string>& observed);

// Appends the names of `more` not yet in `*list` (exact names), in order.
void AddHostNames(const std::vector<std::string>& more, std::vector<std::string>* list);

}  // namespace qpconnect
