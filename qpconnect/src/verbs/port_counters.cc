// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/port_counters.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace qpconnect::verbs {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// The counters in `dir`, name order; a name already in `out` is skipped.
bool ReadDir(const fs::path& dir, PortCounters& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    if (n == "lifespan" || out.Get(n)) continue;  // lifespan: a setting (ms), not a count
    auto line = FirstLine(dir / n);
    if (!line || line->empty()) continue;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(line->c_str(), &end, 10);
    if (end == line->c_str() || (*end != '\0' && *end != '\n' && *end != ' ')) continue;
    out.values.emplace_back(n, v);
  }
  return true;
}

}  // namespace

PortCounters ReadSysfsPortCounters(const std::string& device, uint32_t port,
                                   const std::string& root) {
  PortCounters c;
  c.device = device;
  c.port = port;
  const fs::path base = fs::path(root) / device / "ports" / std::to_string(port);
  if (auto state = FirstLine(base / "state")) {
    // "4: ACTIVE"
    const size_t colon = state->find(": ");
    c.state = colon == std::string::npos ? *state : state->substr(colon + 2);
  }
  const bool hw = ReadDir(base / "hw_counters", c);
  const bool ib = ReadDir(base / "counters", c);
  if (c.values.empty()) {
    c.unknown = !hw && !ib ? "no counters under " + base.string()
                           : "no readable counter under " + base.string();
  }
  return c;
}

}  // namespace qpconnect::verbs
