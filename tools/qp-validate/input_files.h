// SPDX-License-Identifier: MIT
// What qp-validate's modes share about their input files: how a whole input
// is read (injected, so tests can feed text), the heads of the named files
// (what decides the mode, and sizes the snapshot mode's QP table), and the
// rule that "-" (standard input) stands at most once.
//
// Thread-safety: pure functions of their arguments and the file system.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect::tools::qp_validate {

// Reads a whole input ("-" is standard input).
using ReadInputFn = std::function<Result<std::string>(const std::string& name)>;

// The first `bytes` bytes (fewer for a shorter file, none for one that
// cannot be read) of each named file in `files`, in order; "-" is skipped
// (standard input cannot be read twice).
std::vector<std::string> FileHeads(const std::vector<std::string>& files, size_t bytes);

// How the modes name an input in their messages: "<stdin>" for "-".
std::string InputName(const std::string& file);

// The whole of `file` read by `read`; nullopt after writing "qp-validate:
// NAME: WHY" (InputName()) to `err` when it cannot be read.
std::optional<std::string> ReadOrSay(const ReadInputFn& read, const std::string& file,
                                     std::ostream& err);

// False, after writing "qp-validate: '-' (standard input) can be given
// once" to `err`, when "-" stands more than once in `files`.
bool StdinAtMostOnce(const std::vector<std::string>& files, std::ostream& err);

}  // namespace qpconnect::tools::qp_validate
