// SPDX-License-Identifier: MIT
// ExpandHostList(), ParseHostfile(): the job's host list (job_hosts.h).
#include "qpconnect/observe/job_hosts.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

namespace qpconnect {
namespace {

// One bracket's numbers: [lo, hi] each printed with at least `width` digits.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

// A name's parts: literal text, or a bracket (its ranges).
struct Part {
  std::string text;
  std::vector<Range> ranges;  // empty: literal
};

Error Bad(std::string_view list, std::string what) {
  return Error{ErrorCode::kInvalidArgument, 0, "host list", "", std::string(list) + ": " + what};
}

std::string Column(size_t at) { return "column " + std::to_string(at + 1); }

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string Padded(uint64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// The ranges of the bracket list[open + 1, close): "01-04,07".
Result<std::vector<Range>> ParseBracket(std::string_view list, size_t open, size_t close) {
  std::vector<Range> out;
  size_t i = open + 1;
  while (true) {
    const size_t end = std::min(list.find(',', i), close);
    const std::string_view item = list.substr(i, end - i);
    if (item.empty()) return Bad(list, "empty range at " + Column(i) + " (write [1-4,7])");
    const size_t dash = item.find('-');
    const std::string_view lo = item.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    for (size_t k = 0; k < item.size(); ++k) {
      const char c = item[k];
      if ((c < '0' || c > '9') && !(c == '-' && k == dash)) {
        return Bad(list, std::string("'") + c + "' at " + Column(i + k) +
                             ": a bracket holds numbers and ranges (1-4,7)");
      }
    }
    if (lo.empty() || hi.empty()) {
      return Bad(list, "range '" + std::string(item) + "' at " + Column(i) + " lacks a bound");
    }
    if (lo.size() > 18 || hi.size() > 18) {
      return Bad(list, "number at " + Column(i) + " is too large");
    }
    Range r;
    r.lo = std::stoull(std::string(lo));
    r.hi = std::stoull(std::string(hi));
    r.width = lo.size();
    if (r.hi < r.lo) {
      return Bad(list, "range " + std::string(item) + " at " + Column(i) + " goes down (write " +
                           std::string(hi) + "-" + std::string(lo) + ")");
    }
    out.push_back(r);
    if (end == close) break;
    i = end + 1;
  }
  return out;
}

// Appends the names one item ("node[01-04]-ib") stands for to `out`.
Result<size_t> ExpandItem(std::string_view list, size_t from, size_t to,
                          std::vector<std::string>* out, std::unordered_set<std::string>* seen) {
  std::vector<Part> parts;
  uint64_t count = 1;
  size_t i = from;
  while (i < to) {
    const size_t open = list.find_first_of("[]", i);
    if (open == std::string_view::npos || open >= to) {
      parts.push_back({std::string(list.substr(i, to - i)), {}});
      break;
    }
    if (list[open] == ']') return Bad(list, "']' at " + Column(open) + " closes no '['");
    if (open > i) parts.push_back({std::string(list.substr(i, open - i)), {}});
    const size_t close = list.find_first_of("[]", open + 1);
    if (close == std::string_view::npos || close >= to || list[close] == '[') {
      return Bad(
          list,
          "'[' at " + Column(open) + " is not closed" +
              (close < to && list[close] == '[' ? " (another '[' at " + Column(close) + ")" : ""));
    }
    Result<std::vector<Range>> ranges = ParseBracket(list, open, close);
    if (!ranges) return ranges.error();
    uint64_t n = 0;
    for (const Range& r : *ranges) {
      n += std::min<uint64_t>(r.hi - r.lo, kMaxJobHosts) + 1;  // no overflow
    }
    if (n > kMaxJobHosts || count * n > kMaxJobHosts) {
      return Bad(list, "expands to more than " + std::to_string(kMaxJobHosts) + " hosts");
    }
    count *= n;
    parts.push_back({"", std::move(*ranges)});
    i = close + 1;
  }
  if (out->size() + count > kMaxJobHosts) {
    return Bad(list, "expands to more than " + std::to_string(kMaxJobHosts) + " hosts");
  }
  // The names in order: the last bracket varies fastest (Slurm's order).
  std::vector<std::string> names = {""};
  for (const Part& p : parts) {
    if (p.ranges.empty()) {
      for (std::string& n : names) n += p.text;
      continue;
    }
    std::vector<std::string> next;
    for (const std::string& n : names) {
      for (const Range& r : p.ranges) {
        for (uint64_t v = r.lo;; ++v) {
          next.push_back(n + Padded(v, r.width));
          if (v == r.hi) break;
        }
      }
    }
    names = std::move(next);
  }
  size_t added = 0;
  for (std::string& n : names) {
    if (seen->insert(n).second) {
      out->push_back(std::move(n));
      ++added;
    }
  }
  return added;
}

// The end of the JSON value starting at text[i] (a string, an array or
// object, or a scalar), as far as nesting and strings go; npos if cut.
size_t SkipValue(std::string_view text, size_t i) {
  int depth = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= text.size()) return std::string_view::npos;
      if (depth == 0) return i + 1;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (depth == 0) return i;  // a scalar's end
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return depth == 0 ? i : std::string_view::npos;
}

size_t SkipSpace(std::string_view text, size_t i) {
  while (i < text.size() && IsSpace(text[i])) ++i;
  return i;
}

}  // namespace

Result<std::vector<std::string>> JobHostsFromArray(std::string_view array) {
  const nlohmann::json v = nlohmann::json::parse(array, nullptr, false);
  std::vector<std::string> hosts;
  const Error bad{ErrorCode::kProtocol, 0, "job snapshots", "hosts", "not an array of host names"};
  if (!v.is_array()) return bad;
  for (const nlohmann::json& h : v) {
    if (!h.is_string()) return bad;
    hosts.push_back(h.get<std::string>());
  }
  std::vector<std::string> out;
  AddHostNames(hosts, &out);
  return out;
}

Result<std::vector<std::string>> JobHostsFromJson(std::string_view text) {
  auto bad = [](std::string what) {
    return Error{ErrorCode::kProtocol, 0, "job snapshots", "hosts", std::move(what)};
  };
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return bad("not a JSON object");
  i = SkipSpace(text, i + 1);
  // Member by member: "key": value, up to "snapshots".
  while (i < text.size() && text[i] == '"') {
    const size_t key_end = SkipValue(text, i);
    if (key_end == std::string_view::npos) break;
    const std::string_view key = text.substr(i + 1, key_end - i - 2);
    i = SkipSpace(text, key_end);
    if (i >= text.size() || text[i] != ':') break;
    i = SkipSpace(text, i + 1);
    if (key == "snapshots") return std::vector<std::string>();
    const size_t end = SkipValue(text, i);
    if (end == std::string_view::npos) break;
    if (key == "hosts") return JobHostsFromArray(text.substr(i, end - i));
    i = SkipSpace(text, end);
    if (i < text.size() && text[i] == ',') i = SkipSpace(text, i + 1);
  }
  return std::vector<std::string>();
}

Result<std::vector<std::string>> ExpandHostList(std::string_view list) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  size_t i = 0;
  while (i <= list.size()) {
    // The item ends at a comma outside brackets.
    size_t end = i;
    bool in_bracket = false;
    while (end < list.size() && (in_bracket || list[end] != ',')) {
      if (list[end] == '[') in_bracket = true;
      if (list[end] == ']') in_bracket = false;
      ++end;
    }
    size_t from = i, to = end;
    while (from < to && IsSpace(list[from])) ++from;
    while (to > from && IsSpace(list[to - 1])) --to;
    if (from < to) {
      for (size_t k = from; k < to; ++k) {
        if (IsSpace(list[k])) {
          return Bad(list, "a space at " + Column(k) + " inside a name (separate names by ',')");
        }
      }
      Result<size_t> added = ExpandItem(list, from, to, &out, &seen);
      if (!added) return added.error();
    }
    i = end + 1;
  }
  return out;
}

Result<std::vector<std::string>> ParseHostfile(std::string_view text) {
  std::vector<std::string> out;
  size_t line_no = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(i, end - i);
    i = end + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    size_t from = 0;
    while (from < line.size() && IsSpace(line[from])) ++from;
    size_t to = from;
    while (to < line.size() && !IsSpace(line[to])) ++to;
    std::string_view word = line.substr(from, to - from);
    if (word.empty()) continue;
    if (word.find('=') != std::string_view::npos) {
      return Error{ErrorCode::kInvalidArgument, 0, "hostfile", "",
                   "line " + std::to_string(line_no) + ": '" + std::string(word) +
                       "' is not a host name (a line is: HOST [slots=N])"};
    }
    const size_t colon = word.find(':');
    // "host:8" (MPICH); an IPv6 address keeps its colons.
    if (colon != std::string_view::npos && word.find(':', colon + 1) == std::string_view::npos) {
      word = word.substr(0, colon);
    }
    AddHostNames({std::string(word)}, &out);
    if (out.size() > kMaxJobHosts) {
      return Error{ErrorCode::kInvalidArgument, 0, "hostfile", "",
                   "more than " + std::to_string(kMaxJobHosts) + " hosts"};
    }
  }
  return out;
}

// An IP address, whose dots are not a domain's.
bool IsAddress(std::string_view s) {
  return s.find(':') != std::string_view::npos ||
         std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

Result<std::vector<std::string>> JobHostsOf(const std::optional<std::string>& list,
                                            const std::optional<std::string>& hostfile_path) {
  std::vector<std::string> hosts;
  if (list) {
    Result<std::vector<std::string>> expanded = ExpandHostList(*list);
    if (!expanded) return expanded.error();
    if (expanded->empty()) {
      return Error{ErrorCode::kInvalidArgument, 0, "host list", "",
                   "'" + *list + "' names no host"};
    }
    AddHostNames(*expanded, &hosts);
  }
  if (hostfile_path) {
    std::ifstream in(*hostfile_path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      const int e = errno;
      return Error{ErrorCode::kIo, e, "hostfile", "",
                   *hostfile_path + ": cannot read: " + std::strerror(e)};
    }
    Result<std::vector<std::string>> parsed = ParseHostfile(text.str());
    if (!parsed) {
      return Error{ErrorCode::kInvalidArgument, 0, "hostfile", "",
                   *hostfile_path + ": " + parsed.error().detail};
    }
    if (parsed->empty()) {
      return Error{ErrorCode::kInvalidArgument, 0, "hostfile", "",
                   *hostfile_path + " names no host"};
    }
    AddHostNames(*parsed, &hosts);
  }
  return hosts;
}

bool SameHostName(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (IsAddress(a) || IsAddress(b)) return false;
  const std::string_view sa = a.substr(0, a.find('.'));
  const std::string_view sb = b.substr(0, b.find('.'));
  // Only one side shortened: "node01" and "node01.cluster", not "10.0.0.1" and "10.0.0.2".
  return (sa == b && sa.size() != a.size()) || (sb == a && sb.size() != b.size());
}

std::vector<std::string> HostsNotIn(const std::vector<std::string>& expected,
                                    const std::vector<std::string>& observed) {
  std::unordered_set<std::string_view> exact(observed.begin(), observed.end());
  std::unordered_set<std::string_view> shorts;
  for (const std::string& o : observed) {
    if (!IsAddress(o)) shorts.insert(std::string_view(o).substr(0, o.find('.')));
  }
  std::vector<std::string> out;
  for (const std::string& e : expected) {
    if (exact.count(e) != 0) continue;
    if (IsAddress(e)) {
      out.push_back(e);
      continue;
    }
    const std::string_view short_e = std::string_view(e).substr(0, e.find('.'));
    // "node01" listed, "node01.cluster" observed; or the reverse.
    if (short_e.size() == e.size() && shorts.count(e) != 0) continue;
    if (short_e.size() != e.size() && exact.count(short_e) != 0) continue;
    out.push_back(e);
  }
  return out;
}

void AddHostNames(const std::vector<std::string>& more, std::vector<std::string>* list) {
  list->reserve(list->size() + more.size());  // before the views: no reallocation after
  std::unordered_set<std::string_view> have(list->begin(), list->end());
  for (const std::string& m : more) {
    if (have.count(m) != 0) continue;
    list->push_back(m);
    have.insert(list->back());
  }
}

}  // namespace qpconnect
