// SPDX-License-Identifier: MIT
// qp-validate: checks two endpoint descriptions against the matching rules,
// offline (no RDMA device needed), and prints every finding.
//
//   qp-validate [--json] [--transport rc|uc|ud] A.json B.json
//   qp-validate [--json] DUMP.json          (a dump that recorded its peer)
//   qp-validate --list-rules [--json | --markdown]
//
// A and B are endpoint JSON (docs/wire-format.md) or dumps written by
// `qp-connect --dump` (then the attributes that side applied are judged too);
// `-` reads one of them from standard input. Exit status (tools/common/
// exit_codes.h): 0 no errors (warnings and notes allowed), 1 errors found,
// 2 unusable input or command line.
//
// Thread-safety: Run() touches no global state besides the streams it is given.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace qpconnect::tools::qp_validate {

// Runs qp-validate with `args` (argv without argv[0]); a `-` operand reads
// standard input. Returns the exit status.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// As above, reading a `-` operand from `in`.
int Run(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
        std::ostream& err);

// The rule catalogue as Markdown: the body of docs/rules.md's catalogue section
// (`qp-validate --list-rules --markdown`).
std::string RulesMarkdown();

}  // namespace qpconnect::tools::qp_validate
