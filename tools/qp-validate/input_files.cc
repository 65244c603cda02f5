// SPDX-License-Identifier: MIT
#include "input_files.h"

#include <algorithm>
#include <fstream>
#include <utility>

namespace qpconnect::tools::qp_validate {

std::vector<std::string> FileHeads(const std::vector<std::string>& files, size_t bytes) {
  std::vector<std::string> heads;
  for (const std::string& f : files) {
    if (f == "-") continue;
    std::ifstream in(f, std::ios::binary);
    std::string head(bytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(bytes));
    head.resize(static_cast<size_t>(in.gcount()));
    heads.push_back(std::move(head));
  }
  return heads;
}

std::string InputName(const std::string& file) { return file == "-" ? "<stdin>" : file; }

std::optional<std::string> ReadOrSay(const ReadInputFn& read, const std::string& file,
                                     std::ostream& err) {
  Result<std::string> text = read(file);
  if (!text) {
    err << "qp-validate: " << InputName(file) << ": " << text.error().detail << "\n";
    return std::nullopt;
  }
  return std::move(*text);
}

bool StdinAtMostOnce(const std::vector<std::string>& files, std::ostream& err) {
  if (std::count(files.begin(), files.end(), "-") <= 1) return true;
  err << "qp-validate: '-' (standard input) can be given once\n";
  return false;
}

}  // namespace qpconnect::tools::qp_validate
