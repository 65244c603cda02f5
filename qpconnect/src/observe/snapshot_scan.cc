// SPDX-License-Identifier: MIT
// ScanSnapshot(): the snapshot file in one pass (snapshot_scan.h). The
// members and their limits are those of snapshot_json.cc's reader.
#include "snapshot_scan.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "qpconnect/observe/snapshot_json.h"

namespace qpconnect::snapshot_internal {
namespace {

using namespace std::string_view_literals;

constexpr uint64_t k24Bits = 0xffffff;

// A cursor over the text; every method returns false on what it does not
// expect, and the caller gives up.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void Space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool Eat(char c) {
    Space();
    if (p_ >= end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  bool Peek(char c) {
    Space();
    return p_ < end_ && *p_ == c;
  }

  bool AtEnd() {
    Space();
    return p_ == end_;
  }

  // A string without escapes.
  bool String(std::string_view* out) {
    if (!Eat('"')) return false;
    const char* start = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) return false;
      ++p_;
    }
    if (p_ >= end_) return false;
    *out = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }

  bool Null() {
    Space();
    if (end_ - p_ >= 4 && std::string_view(p_, 4) == "null") {
      p_ += 4;
      return true;
    }
    return false;
  }

  bool Unsigned(uint64_t max, uint64_t* out) {
    Space();
    auto [next, ec] = std::from_chars(p_, end_, *out);
    if (ec != std::errc() || next == p_ || *out > max) return false;
    if (next < end_ && (*next == '.' || *next == 'e' || *next == 'E')) return false;
    p_ = next;
    return true;
  }

  bool Double(double* out) {
    Space();
    auto [next, ec] = std::from_chars(p_, end_, *out);
    if (ec != std::errc() || next == p_) return false;
    p_ = next;
    return true;
  }

  // Any JSON value, not kept.
  bool Skip(int depth = 0) {
    if (depth > 64) return false;
    Space();
    if (p_ >= end_) return false;
    if (*p_ == '"') {
      ++p_;
      while (p_ < end_ && *p_ != '"') p_ += *p_ == '\\' ? 2 : 1;
      if (p_ >= end_) return false;
      ++p_;
      return true;
    }
    if (*p_ == '{' || *p_ == '[') {
      const char close = *p_ == '{' ? '}' : ']';
      const bool object = *p_ == '{';
      ++p_;
      if (Eat(close)) return true;
      do {
        if (object) {
          std::string_view key;
          if (!SkipString() || !Eat(':')) return false;
          (void)key;
        }
        if (!Skip(depth + 1)) return false;
      } while (Eat(','));
      return Eat(close);
    }
    const char* start = p_;
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' && *p_ != '\n') ++p_;
    const std::string_view word(start, static_cast<size_t>(p_ - start));
    if (word == "null" || word == "true" || word == "false") return true;
    double d = 0;
    auto [next, ec] = std::from_chars(start, p_, d);
    return ec == std::errc() && next == p_;
  }

  // Members of an object: calls member(key) for each, which reads the value.
  template <typename Fn>
  bool Object(Fn member) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    do {
      std::string_view key;
      if (!String(&key) || !Eat(':') || !member(key)) return false;
    } while (Eat(','));
    return Eat('}');
  }

  // Elements of an array: calls element() for each, which reads it.
  template <typename Fn>
  bool Array(Fn element) {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    do {
      if (!element()) return false;
    } while (Eat(','));
    return Eat(']');
  }

 private:
  bool SkipString() {
    std::string_view ignored;
    Space();
    if (p_ < end_ && *p_ == '"') {
      // Keys with escapes are still keys: skip them whole.
      const char* save = p_;
      if (String(&ignored)) return true;
      p_ = save + 1;
      while (p_ < end_ && *p_ != '"') p_ += *p_ == '\\' ? 2 : 1;
      if (p_ >= end_) return false;
      ++p_;
      return true;
    }
    return false;
  }

  const char* p_;
  const char* end_;
};

// A string member that may be null (then "").
bool OptionalString(Scanner& s, std::string* out) {
  if (s.Null()) {
    out->clear();
    return true;
  }
  std::string_view v;
  if (!s.String(&v)) return false;
  out->assign(v);
  return true;
}

// A string member that must be there; `seen` records that it was.
bool Text(Scanner& s, std::string* out, bool* seen) {
  *seen = true;
  std::string_view v;
  if (!s.String(&v)) return false;
  out->assign(v);
  return true;
}

// An unsigned member up to `max`; with `seen`, it must be there, else null
// leaves `out` as it is.
template <typename T>
bool Number(Scanner& s, uint64_t max, T* out, bool* seen = nullptr) {
  if (seen != nullptr) {
    *seen = true;
  } else if (s.Null()) {
    return true;
  }
  uint64_t v = 0;
  if (!s.Unsigned(max, &v)) return false;
  *out = static_cast<T>(v);
  return true;
}

bool OptionalU24(Scanner& s, std::optional<uint32_t>* out) {
  if (s.Null()) {
    out->reset();
    return true;
  }
  uint32_t v = 0;
  if (!Number(s, k24Bits, &v)) return false;
  *out = v;
  return true;
}

bool Address(Scanner& s, std::optional<Gid>* out) {
  std::string text;
  if (!OptionalString(s, &text)) return false;
  if (text.empty()) return true;
  *out = GidFromString(text);
  return out->has_value();
}

bool ReadQp(Scanner& s, KernelQp* q) {
  bool device = false, port = false, lqpn = false, type = false, state = false;
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "device"sv) return Text(s, &q->device, &device) && !q->device.empty();
    if (key == "port"sv) return Number(s, 255, &q->port, &port);
    if (key == "lqpn"sv) return Number(s, k24Bits, &q->lqpn, &lqpn);
    if (key == "rqpn"sv) return OptionalU24(s, &q->rqpn);
    if (key == "sq_psn"sv) return OptionalU24(s, &q->sq_psn);
    if (key == "rq_psn"sv) return OptionalU24(s, &q->rq_psn);
    if (key == "type"sv) return Text(s, &q->type, &type);
    if (key == "state"sv) return Text(s, &q->state, &state);
    if (key == "path_mig_state"sv) return OptionalString(s, &q->path_mig_state);
    if (key == "pid"sv) {
      return Number(s, static_cast<uint64_t>(std::numeric_limits<int>::max()), &q->pid);
    }
    if (key == "comm"sv) return OptionalString(s, &q->comm);
    if (key == "process_state"sv) return OptionalString(s, &q->process_state);
    if (key == "dgid"sv) return Address(s, &q->dgid);
    if (key == "src_addr"sv) return OptionalString(s, &q->src_addr);
    if (key == "dst_addr"sv) return OptionalString(s, &q->dst_addr);
    if (key == "dest_source"sv) return OptionalString(s, &q->dest_source);
    if (key == "dlid"sv) {
      if (s.Null()) return true;
      uint16_t lid = 0;
      if (!Number(s, 0xffff, &lid)) return false;
      q->dlid = lid;
      return true;
    }
    return s.Skip();
  });
  return ok && device && port && lqpn && type && state;
}

// As the tree reader gives them: by name, the last of a repeated name.
void SortCounters(std::vector<std::pair<std::string, uint64_t>>* counters) {
  std::stable_sort(counters->begin(), counters->end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i + 1 < counters->size();) {
    if ((*counters)[i].first == (*counters)[i + 1].first) {
      counters->erase(counters->begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

bool ReadPort(Scanner& s, KernelPortCounters* p) {
  bool device = false, port = false;
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "device"sv) return Text(s, &p->device, &device);
    if (key == "port"sv) return Number(s, 255, &p->port, &port);
    if (key == "counters"sv) {
      if (s.Null()) return true;
      const bool read = s.Object([&](std::string_view name) {
        uint64_t v = 0;
        if (!s.Unsigned(std::numeric_limits<uint64_t>::max(), &v)) return false;
        p->counters.push_back({std::string(name), v});
        return true;
      });
      SortCounters(&p->counters);
      return read;
    }
    return s.Skip();
  });
  return ok && device && port;
}

bool ReadIdentity(Scanner& s, PortIdentity* p) {
  bool device = false, port = false;
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "device"sv) return Text(s, &p->device, &device);
    if (key == "port"sv) return Number(s, 255, &p->port, &port);
    if (key == "lid"sv) return Number(s, 0xffff, &p->lid);
    if (key == "link_layer"sv) return OptionalString(s, &p->link_layer);
    if (key == "lmc"sv) return Number(s, 7, &p->lmc);
    if (key == "sm_lid"sv) return Number(s, 0xffff, &p->sm_lid);
    if (key == "subnet_prefix"sv) {
      std::string prefix;
      if (!OptionalString(s, &prefix)) return false;
      if (prefix.empty()) return true;
      std::string_view hex = prefix;
      if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
      auto [next, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), p->subnet_prefix, 16);
      return ec == std::errc() && next == hex.data() + hex.size();
    }
    if (key == "gids"sv) {
      if (s.Null()) return true;
      return s.Array([&] {
        std::optional<Gid> gid;
        if (!Address(s, &gid) || !gid) return false;
        p->gids.push_back(*gid);
        return true;
      });
    }
    return s.Skip();
  });
  return ok && device && port;
}

bool ReadSample(Scanner& s, size_t num_qps, KernelSample* sample) {
  sample->qps.reserve(num_qps);
  bool at = false, qps = false;
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "at_seconds"sv) {
      at = true;
      return s.Double(&sample->at_seconds);
    }
    if (key == "qps"sv) {
      qps = true;
      return s.Array([&] {
        sample->qps.emplace_back();
        return ReadQp(s, &sample->qps.back());
      });
    }
    if (key == "ports"sv) {
      if (s.Null()) return true;
      return s.Array([&] {
        sample->ports.emplace_back();
        return ReadPort(s, &sample->ports.back());
      });
    }
    return s.Skip();
  });
  return ok && at && qps;
}

}  // namespace

std::optional<Snapshot> ScanSnapshot(std::string_view text) {
  Scanner s(text);
  Snapshot snap;
  bool format = false, version = false, samples = false;
  size_t num_qps = 0;  // a hint from the head, capped: never trusted beyond sizing
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "format"sv) {
      std::string_view f;
      format = s.String(&f) && f == kSnapshotFormat;
      return format;
    }
    if (key == "version"sv) {
      uint64_t v = 0;
      version = s.Unsigned(1u << 30, &v) && v == static_cast<uint64_t>(kSnapshotVersion);
      return version;
    }
    if (key == "num_qps"sv) {
      uint64_t v = 0;
      if (!s.Unsigned(std::numeric_limits<uint64_t>::max(), &v)) return false;
      num_qps = static_cast<size_t>(std::min<uint64_t>(v, text.size() / 64));
      return true;
    }
    if (key == "tool"sv) return OptionalString(s, &snap.tool);
    if (key == "host"sv) return OptionalString(s, &snap.host);
    if (key == "taken_at"sv) return OptionalString(s, &snap.taken_at);
    if (key == "started_epoch"sv) {
      if (s.Null()) return true;
      return s.Double(&snap.started_epoch) && snap.started_epoch >= 0;
    }
    if (key == "job"sv) return OptionalString(s, &snap.job);
    if (key == "notes"sv) {
      if (s.Null()) return true;
      return s.Array([&] {
        if (!s.Peek('"')) return s.Skip();  // the tree reader drops non-strings too
        std::string_view n;
        if (!s.String(&n)) return false;
        snap.notes.emplace_back(n);
        return true;
      });
    }
    if (key == "identity"sv) {
      if (s.Null()) return true;
      return s.Array([&] {
        snap.identity.emplace_back();
        return ReadIdentity(s, &snap.identity.back());
      });
    }
    // The RoCE paths (kernel_paths.h) are few and nested: a file that has
    // them is left to the tree reader, which reads them (null: none).
    if (key == "paths"sv) return s.Null();
    if (key == "samples"sv) {
      samples = true;
      return s.Array([&] {
        snap.samples.emplace_back();
        if (!ReadSample(s, num_qps, &snap.samples.back())) return false;
        const size_t n = snap.samples.size();
        return n < 2 || snap.samples[n - 1].at_seconds >= snap.samples[n - 2].at_seconds;
      });
    }
    return s.Skip();
  });
  if (!ok || !s.AtEnd() || !format || !version || !samples || snap.samples.empty()) {
    return std::nullopt;
  }
  return snap;
}

}  // namespace qpconnect::snapshot_internal
