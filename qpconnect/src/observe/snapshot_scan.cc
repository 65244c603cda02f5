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

bool OptionalU24(Scanner& s, std::optional<uint32_t>* out) {
  if (s.Null()) {
    out->reset();
    return true;
  }
  uint64_t v = 0;
  if (!s.Unsigned(k24Bits, &v)) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool ReadQp(Scanner& s, KernelQp* q) {
  bool device = false, port = false, lqpn = false, type = false, state = false;
  const bool ok = s.Object([&](std::string_view key) {
    uint64_t v = 0;
    if (key == "device") {
      device = true;
      return OptionalString(s, &q->device) && !q->device.empty();
    }
    if (key == "port") {
      port = true;
      if (!s.Unsigned(255, &v)) return false;
      q->port = static_cast<uint8_t>(v);
      return true;
    }
    if (key == "lqpn") {
      lqpn = true;
      if (!s.Unsigned(k24Bits, &v)) return false;
      q->lqpn = static_cast<uint32_t>(v);
      return true;
    }
    if (key == "rqpn") return OptionalU24(s, &q->rqpn);
    if (key == "sq_psn") return OptionalU24(s, &q->sq_psn);
    if (key == "rq_psn") return OptionalU24(s, &q->rq_psn);
    if (key == "type") {
      type = true;
      std::string_view t;
      if (!s.String(&t)) return false;
      q->type.assign(t);
      return true;
    }
    if (key == "state") {
      state = true;
      std::string_view t;
      if (!s.String(&t)) return false;
      q->state.assign(t);
      return true;
    }
    if (key == "path_mig_state") return OptionalString(s, &q->path_mig_state);
    if (key == "pid") {
      if (s.Null()) return true;
      if (!s.Unsigned(static_cast<uint64_t>(std::numeric_limits<int>::max()), &v)) return false;
      q->pid = static_cast<int>(v);
      return true;
    }
    if (key == "comm") return OptionalString(s, &q->comm);
    if (key == "process_state") return OptionalString(s, &q->process_state);
    if (key == "dgid") {
      if (s.Null()) return true;
      std::string_view g;
      if (!s.String(&g)) return false;
      if (g.empty()) return true;
      q->dgid = GidFromString(std::string(g));
      return q->dgid.has_value();
    }
    if (key == "dlid") {
      if (s.Null()) return true;
      if (!s.Unsigned(0xffff, &v)) return false;
      q->dlid = static_cast<uint16_t>(v);
      return true;
    }
    return s.Skip();
  });
  return ok && device && port && lqpn && type && state;
}

bool ReadPort(Scanner& s, KernelPortCounters* p) {
  bool device = false, port = false;
  const bool ok = s.Object([&](std::string_view key) {
    if (key == "device") {
      device = true;
      std::string_view d;
      if (!s.String(&d)) return false;
      p->device.assign(d);
      return true;
    }
    if (key == "port") {
      port = true;
      uint64_t v = 0;
      if (!s.Unsigned(255, &v)) return false;
      p->port = static_cast<uint8_t>(v);
      return true;
    }
    if (key == "counters") {
      if (s.Null()) return true;
      const bool read = s.Object([&](std::string_view name) {
        uint64_t v = 0;
        if (!s.Unsigned(std::numeric_limits<uint64_t>::max(), &v)) return false;
        p->counters.push_back({std::string(name), v});
        return true;
      });
      // As the tree reader gives them: by name, the last of a repeated name.
      std::stable_sort(p->counters.begin(), p->counters.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i + 1 < p->counters.size();) {
        if (p->counters[i].first == p->counters[i + 1].first) {
          p->counters.erase(p->counters.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      return read;
    }
    return s.Skip();
  });
  return ok && device && port;
}

bool ReadIdentity(Scanner& s, PortIdentity* p) {
  bool device = false, port = false;
  const bool ok = s.Object([&](std::string_view key) {
    uint64_t v = 0;
    if (key == "device") {
      device = true;
      std::string_view d;
      if (!s.String(&d)) return false;
      p->device.assign(d);
      return true;
    }
    if (key == "port") {
      port = true;
      if (!s.Unsigned(255, &v)) return false;
      p->port = static_cast<uint8_t>(v);
      return true;
    }
    if (key == "lid") {
      if (s.Null()) return true;
      if (!s.Unsigned(0xffff, &v)) return false;
      p->lid = static_cast<uint16_t>(v);
      return true;
    }
    if (key == "lmc") {
      if (s.Null()) return true;
      if (!s.Unsigned(7, &v)) return false;
      p->lmc = static_cast<uint8_t>(v);
      return true;
    }
    if (key == "subnet_prefix") {
      std::string prefix;
      if (!OptionalString(s, &prefix)) return false;
      if (prefix.empty()) return true;
      std::string_view hex = prefix;
      if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
      auto [next, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), p->subnet_prefix, 16);
      return ec == std::errc() && next == hex.data() + hex.size();
    }
    if (key == "gids") {
      if (s.Null()) return true;
      return s.Array([&] {
        std::string_view g;
        if (!s.String(&g)) return false;
        std::optional<Gid> gid = GidFromString(std::string(g));
        if (!gid) return false;
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
    if (key == "at_seconds") {
      at = true;
      return s.Double(&sample->at_seconds);
    }
    if (key == "qps") {
      qps = true;
      return s.Array([&] {
        sample->qps.emplace_back();
        return ReadQp(s, &sample->qps.back());
      });
    }
    if (key == "ports") {
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
    if (key == "format") {
      std::string_view f;
      format = s.String(&f) && f == kSnapshotFormat;
      return format;
    }
    if (key == "version") {
      uint64_t v = 0;
      version = s.Unsigned(1u << 30, &v) && v == static_cast<uint64_t>(kSnapshotVersion);
      return version;
    }
    if (key == "num_qps") {
      uint64_t v = 0;
      if (!s.Unsigned(std::numeric_limits<uint64_t>::max(), &v)) return false;
      num_qps = static_cast<size_t>(std::min<uint64_t>(v, text.size() / 64));
      return true;
    }
    if (key == "tool") return OptionalString(s, &snap.tool);
    if (key == "host") return OptionalString(s, &snap.host);
    if (key == "taken_at") return OptionalString(s, &snap.taken_at);
    if (key == "job") return OptionalString(s, &snap.job);
    if (key == "notes") {
      if (s.Null()) return true;
      return s.Array([&] {
        if (!s.Peek('"')) return s.Skip();  // the tree reader drops non-strings too
        std::string_view n;
        if (!s.String(&n)) return false;
        snap.notes.emplace_back(n);
        return true;
      });
    }
    if (key == "identity") {
      if (s.Null()) return true;
      return s.Array([&] {
        snap.identity.emplace_back();
        return ReadIdentity(s, &snap.identity.back());
      });
    }
    if (key == "samples") {
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
