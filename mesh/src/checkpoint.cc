// SPDX-License-Identifier: MIT
#include "checkpoint.h"

#include <exception>
#include <sstream>
#include <utility>

namespace qpconnect::mesh_internal {
namespace {

// One line of text: tabs and newlines would break the gathered records.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string EncodeCheckpoint(const CheckpointRecord& c) {
  std::ostringstream out;
  out << "S\t" << c.connected << '\t' << c.slowest_ms << '\t' << c.slowest_peer << '\n';
  for (size_t i = 0; i < c.failures.size(); ++i) {
    const MeshPairFailure& f = c.failures[i];
    out << "F\t" << f.rank_a << '\t' << f.rank_b << '\t' << OneLine(f.host_a) << '\t'
        << OneLine(f.host_b) << '\t' << static_cast<int>(c.codes[i]) << '\t' << OneLine(f.what)
        << '\n';
  }
  return out.str();
}

CheckpointRecord DecodeCheckpoint(const std::string& text) {
  CheckpointRecord c;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string field;
    std::istringstream fields(line);
    while (std::getline(fields, field, '\t')) f.push_back(field);
    try {
      if (f.size() == 4 && f[0] == "S") {
        c.connected = std::stoull(f[1]);
        c.slowest_ms = std::stod(f[2]);
        c.slowest_peer = std::stoi(f[3]);
      } else if (f.size() == 7 && f[0] == "F") {
        MeshPairFailure p;
        p.rank_a = std::stoi(f[1]);
        p.rank_b = std::stoi(f[2]);
        p.host_a = f[3];
        p.host_b = f[4];
        const int code = std::stoi(f[5]);
        p.what = f[6];
        c.failures.push_back(std::move(p));
        c.codes.push_back(code >= 0 && code <= static_cast<int>(ErrorCode::kTraffic)
                              ? static_cast<ErrorCode>(code)
                              : ErrorCode::kIncompatible);
      }
    } catch (const std::exception&) {
      continue;
    }
  }
  return c;
}

}  // namespace qpconnect::mesh_internal
