// SPDX-License-Identifier: MIT
#include "qpconnect/proof_failure.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace qpconnect {
namespace {

struct CauseRow {
  ProofCause cause;
  const char* name;
  const char* meaning;
};

constexpr std::array<CauseRow, 13> kCauses = {{
    {ProofCause::kRetryExceeded, "retry-exceeded",
     "the path is broken: no ACK came back within the retry budget"},
    {ProofCause::kRnrRetryExceeded, "rnr-retry-exceeded",
     "the receiver was not ready: it had no receive posted"},
    {ProofCause::kRemoteAccess, "remote-access",
     "the peer refused the access: rkey, address, length or access flags"},
    {ProofCause::kRemoteInvalidRequest, "remote-invalid-request",
     "the peer refused the request: too large for its receive, or not allowed on its QP"},
    {ProofCause::kRemoteOperation, "remote-operation", "the peer could not complete the request"},
    {ProofCause::kLocalProtection, "local-protection",
     "a local buffer is outside its registered MR"},
    {ProofCause::kLocalLength, "local-length", "a receive buffer is smaller than the message"},
    {ProofCause::kLocalQpOperation, "local-qp-operation",
     "the QP could not execute the work request: not in RTS, or its port is down"},
    {ProofCause::kResponseTimeout, "response-timeout",
     "the path is broken: no response to an RDMA READ or atomic"},
    {ProofCause::kFlushed, "flushed", "the QP was already in the error state"},
    {ProofCause::kOtherStatus, "completion-error", "a work completion failed"},
    {ProofCause::kNoCompletion, "no-completion",
     "no completion at all within the retry budget: the path lost the packets"},
    {ProofCause::kPeerFailed, "peer-failed", "the peer's proof failed"},
}};

const CauseRow& Row(ProofCause cause) {
  for (const CauseRow& r : kCauses) {
    if (r.cause == cause) return r;
  }
  return kCauses[10];
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ';' || c == '=' || c == '%' || u < 0x20 || u > 0x7e) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const std::string hex(s.substr(i + 1, 2));
    char* end = nullptr;
    const long v = std::strtol(hex.c_str(), &end, 16);
    if (end != hex.c_str() + 2) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

std::optional<uint64_t> Number(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> FirstOf(const PortCounters& c, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (auto v = c.Get(n)) return v;
  }
  return std::nullopt;
}

std::string Packets(uint64_t n) { return std::to_string(n) + (n == 1 ? " packet" : " packets"); }

std::string MsText(std::chrono::nanoseconds ns) {
  char buf[32];
  const double ms = std::chrono::duration<double, std::milli>(ns).count();
  std::snprintf(buf, sizeof buf, ms < 100 ? "%.1f ms" : "%.0f ms", ms);
  return buf;
}

// "rxe1 port 1 (ACTIVE): sent 8, received 0, retried 7, discarded 0
// (sent_pkts +8, ...)"
std::string CountersLine(const ProofSide& s) {
  std::string line = (s.device.empty() ? std::string("?") : s.device) + " port " +
                     std::to_string(s.port) +
                     (s.port_state.empty() ? std::string() : " (" + s.port_state + ")") + ": ";
  if (s.delta.values.empty()) {
    return line + "counters unknown (" +
           (s.delta.unknown.empty() ? std::string("none read") : s.delta.unknown) + ")";
  }
  const PacketCounts p = PacketCountsOf(s.delta);
  auto part = [](const char* what, const std::optional<uint64_t>& v) {
    return std::string(what) + " " + (v ? std::to_string(*v) : std::string("?"));
  };
  line += part("sent", p.sent) + ", " + part("received", p.received) + ", " +
          part("retried", p.retried) + ", " + part("discarded", p.discarded) + " (";
  bool first = true;
  for (const auto& [name, v] : s.delta.values) {
    if (v == 0) continue;
    line += (first ? "" : ", ") + name + " +" + std::to_string(v);
    first = false;
  }
  if (first) line += "no counter moved";
  return line + ")";
}

// "rxe1 port 1 is DOWN (veth1 down?)" for the first of `from`, `to` whose
// port is not ACTIVE; "" when both are (or their state is unknown).
std::string PortNotActive(const ProofSide& from, const ProofSide* to) {
  for (const ProofSide* side : {&from, to}) {
    if (side == nullptr || side->port_state.empty() || side->port_state == "ACTIVE") continue;
    return side->device + " port " + std::to_string(side->port) + " is " + side->port_state +
           (side->netdev.empty() ? std::string() : " (" + side->netdev + " down?)");
  }
  return {};
}

// Why packets from `from` to `to` did not arrive, from what both know.
std::string WhyLost(const ProofSide& from, const ProofSide* to) {
  if (std::string down = PortNotActive(from, to); !down.empty()) return down;
  std::string entry;
  if (!from.neighbour_state.empty()) {
    entry = "the neighbour entry for " + from.neighbour_address + " on " + from.netdev + " is " +
            (from.neighbour_mac ? MacToString(*from.neighbour_mac) + " " : std::string()) +
            from.neighbour_state;
  } else if (!from.neighbour_reason.empty()) {
    entry = "the neighbour entry for " +
            (from.neighbour_address.empty() ? std::string("the peer") : from.neighbour_address) +
            " on " + from.netdev + ": " + from.neighbour_reason;
  }
  if (to != nullptr && to->netdev_mac && from.neighbour_mac &&
      *to->netdev_mac != *from.neighbour_mac) {
    return entry + ", the peer's " + to->netdev + " is " + MacToString(*to->netdev_mac);
  }
  if (from.neighbour_state == "FAILED" || from.neighbour_state == "INCOMPLETE") return entry;
  const std::string rest =
      "the packets are lost between the two netdevs (a filter, a switch port, a VLAN?)";
  return entry.empty() ? rest : entry + "; " + rest;
}

}  // namespace

const char* ProofCauseName(ProofCause cause) { return Row(cause).name; }
const char* ProofCauseMeaning(ProofCause cause) { return Row(cause).meaning; }

std::optional<ProofCause> ProofCauseFromName(std::string_view name) {
  for (const CauseRow& r : kCauses) {
    if (name == r.name) return r.cause;
  }
  return std::nullopt;
}

bool IsPathCause(ProofCause cause) {
  return cause == ProofCause::kRetryExceeded || cause == ProofCause::kResponseTimeout ||
         cause == ProofCause::kNoCompletion;
}

std::chrono::nanoseconds RetryBudget::Total() const {
  if (!acknowledged || timeout == 0) return std::chrono::nanoseconds(0);
  const uint64_t ack_ns = (uint64_t{4096} << std::min<uint8_t>(timeout, 31));
  return std::chrono::nanoseconds(ack_ns * (uint64_t{retry_cnt} + 1));
}

std::string RetryBudget::Text() const {
  if (!acknowledged) return "no retry budget (not RC: nothing is acknowledged)";
  if (timeout == 0) return "no retry budget (ACK timeout 0: the QP waits forever)";
  const auto ack = std::chrono::nanoseconds(uint64_t{4096} << std::min<uint8_t>(timeout, 31));
  const unsigned tries = unsigned{retry_cnt} + 1;
  return "ACK timeout " + std::to_string(timeout) + " (" + MsText(ack) + ") x " +
         std::to_string(tries) + (tries == 1 ? " try" : " tries") + " = " + MsText(Total());
}

std::chrono::milliseconds ProofStall(const RetryBudget& budget) {
  return std::chrono::ceil<std::chrono::milliseconds>(budget.Total()) + kProofStallGrace;
}

std::optional<uint64_t> PortCounters::Get(std::string_view name) const {
  for (const auto& [n, v] : values) {
    if (n == name) return v;
  }
  return std::nullopt;
}

PortCounters CounterDelta(const PortCounters& before, const PortCounters& after) {
  PortCounters d;
  d.device = after.device;
  d.port = after.port;
  d.state = after.state;
  d.unknown = after.unknown.empty() ? before.unknown : after.unknown;
  for (const auto& [name, v] : after.values) {
    auto b = before.Get(name);
    if (!b) continue;
    d.values.emplace_back(name, v >= *b ? v - *b : 0);
  }
  if (d.values.empty() && d.unknown.empty()) d.unknown = "no counter read both before and after";
  return d;
}

PacketCounts PacketCountsOf(const PortCounters& c) {
  PacketCounts p;
  p.sent = FirstOf(c, {"sent_pkts", "port_xmit_packets"});
  p.received = FirstOf(c, {"rcvd_pkts", "port_rcv_packets"});
  p.retried = FirstOf(c, {"completer_retry_err", "local_ack_timeout_err"});
  for (const char* n : {"duplicate_request", "out_of_seq_request", "out_of_sequence",
                        "rcvd_seq_err", "packet_seq_err", "port_rcv_errors", "port_rcv_discards"}) {
    if (auto v = c.Get(n)) p.discarded = p.discarded.value_or(0) + *v;
  }
  return p;
}

ProofSide MakeProofSide(ProofCause cause, PortCounters delta,
                        const std::optional<RocePathFacts>& path) {
  ProofSide s;
  s.cause = cause;
  s.device = delta.device;
  s.port = delta.port;
  s.port_state = delta.state;
  s.delta = std::move(delta);
  if (!path) {
    s.neighbour_reason = "no path facts (not RoCE v2)";
    return s;
  }
  s.address = GidAddressText(path->query.local.gid);
  s.netdev = path->query.local.netdev;
  if (path->netdev) s.netdev_mac = path->netdev->mac;
  s.neighbour_address = GidAddressText(path->query.remote);
  if (path->route && !path->route->gateway.empty()) s.neighbour_address = path->route->gateway;
  if (path->neighbour) {
    s.neighbour_address = path->neighbour->address;
    s.neighbour_mac = path->neighbour->mac;
    s.neighbour_state = NeighbourStateName(path->neighbour->state);
  } else {
    s.neighbour_reason = !path->route_error.empty() ? "no route (" + path->route_error + ")"
                                                    : path->neighbour_unknown;
  }
  return s;
}

std::string EncodeProofNote(const ProofSide& s) {
  std::string note;
  auto put = [&note](const std::string& key, std::string_view value) {
    note += (note.empty() ? "" : ";") + key + "=" + Escape(value);
  };
  put("cause", ProofCauseName(s.cause));
  put("dev", s.device);
  put("port", std::to_string(s.port));
  put("state", s.port_state);
  put("addr", s.address);
  put("netdev", s.netdev);
  if (s.netdev_mac) put("mac", MacToString(*s.netdev_mac));
  put("naddr", s.neighbour_address);
  if (s.neighbour_mac) put("nmac", MacToString(*s.neighbour_mac));
  put("nstate", s.neighbour_state);
  put("nwhy", s.neighbour_reason.substr(0, 200));
  if (s.after_budget_ms) put("late", std::to_string(*s.after_budget_ms));
  if (!s.delta.unknown.empty()) put("cwhy", s.delta.unknown.substr(0, 200));
  // Counters: the ones that say where packets go first, then the rest that
  // moved, while they fit.
  std::vector<std::pair<std::string, uint64_t>> order;
  for (const char* n : {"sent_pkts", "rcvd_pkts", "port_xmit_packets", "port_rcv_packets",
                        "completer_retry_err", "local_ack_timeout_err", "retry_exceeded_err"}) {
    if (auto v = s.delta.Get(n)) order.emplace_back(n, *v);
  }
  for (const auto& counter : s.delta.values) {
    const std::string& name = counter.first;
    if (std::none_of(order.begin(), order.end(), [&](const auto& o) { return o.first == name; })) {
      order.emplace_back(name, counter.second);
    }
  }
  for (const auto& [n, v] : order) {
    std::string item = ";c." + Escape(n) + "=" + std::to_string(v);
    if (note.size() + item.size() > 1500) break;
    note += item;
  }
  return note.substr(0, 1500);
}

Result<ProofSide> DecodeProofNote(std::string_view note) {
  auto bad = [](std::string detail) {
    return Error{ErrorCode::kProtocol, 0, "proof note", "", std::move(detail)};
  };
  ProofSide s;
  bool have_cause = false;
  size_t at = 0;
  while (at < note.size()) {
    size_t end = note.find(';', at);
    if (end == std::string_view::npos) end = note.size();
    const std::string_view item = note.substr(at, end - at);
    at = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad("an item without '=': " + std::string(item));
    auto key = Unescape(item.substr(0, eq));
    auto value = Unescape(item.substr(eq + 1));
    if (!key || !value) return bad("a bad escape in: " + std::string(item));
    const std::string& k = *key;
    const std::string& v = *value;
    if (k == "cause") {
      auto c = ProofCauseFromName(v);
      if (!c) return bad("unknown cause '" + v + "'");
      s.cause = *c;
      have_cause = true;
    } else if (k == "dev") {
      s.device = v;
      s.delta.device = v;
    } else if (k == "port") {
      auto n = Number(v);
      if (!n || *n > 255) return bad("bad port '" + v + "'");
      s.port = static_cast<uint32_t>(*n);
      s.delta.port = s.port;
    } else if (k == "state") {
      s.port_state = v;
      s.delta.state = v;
    } else if (k == "addr") {
      s.address = v;
    } else if (k == "netdev") {
      s.netdev = v;
    } else if (k == "mac") {
      s.netdev_mac = MacFromString(v);
    } else if (k == "naddr") {
      s.neighbour_address = v;
    } else if (k == "nmac") {
      s.neighbour_mac = MacFromString(v);
    } else if (k == "nstate") {
      s.neighbour_state = v;
    } else if (k == "nwhy") {
      s.neighbour_reason = v;
    } else if (k == "cwhy") {
      s.delta.unknown = v;
    } else if (k == "late") {
      const bool negative = !v.empty() && v[0] == '-';
      auto n = Number(negative ? v.substr(1) : v);
      if (!n) return bad("bad late '" + v + "'");
      s.after_budget_ms = negative ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
    } else if (k.rfind("c.", 0) == 0) {
      auto n = Number(v);
      if (!n) return bad("bad counter value '" + v + "'");
      s.delta.values.emplace_back(k.substr(2), *n);
    }  // unknown keys: a later writer's; ignored
  }
  if (!have_cause) return bad("no cause");
  return s;
}

ProofVerdict ExplainProof(const ProofSide& local, const std::optional<ProofSide>& remote) {
  ProofVerdict v;
  v.cause = local.cause == ProofCause::kPeerFailed && remote ? remote->cause : local.cause;
  v.counters.push_back(CountersLine(local));
  if (remote) v.counters.push_back(CountersLine(*remote));
  std::string text = std::string(ProofCauseName(v.cause)) + " (" + ProofCauseMeaning(v.cause) + ")";
  if (local.cause == ProofCause::kPeerFailed && remote) {
    text = "the peer's proof failed: " + text;
  }

  // Where the packets stop: a direction with packets sent and none (or
  // fewer) received, this side's first.
  std::string where;
  bool lost = false;
  const PacketCounts l = PacketCountsOf(local.delta);
  if (remote) {
    const PacketCounts r = PacketCountsOf(remote->delta);
    auto direction = [&](const ProofSide& from, const PacketCounts& fc, const ProofSide& to,
                         const PacketCounts& tc) -> std::string {
      if (!fc.sent || !tc.received || *fc.sent == 0 || *tc.received >= *fc.sent) return {};
      lost = true;
      const std::string got =
          *tc.received == 0 ? "received none" : "received " + std::to_string(*tc.received);
      return from.device + " sent " + Packets(*fc.sent) + " to " +
             (to.address.empty() ? to.device : to.address) + " and " + to.device + " " + got +
             ": " + WhyLost(from, &to);
    };
    // The direction that lost more, this side's on a tie: the other may
    // count as lost only the few packets in flight when both stopped.
    auto deficit = [](const PacketCounts& fc, const PacketCounts& tc) -> uint64_t {
      if (!fc.sent || !tc.received || *tc.received >= *fc.sent) return 0;
      return *fc.sent - *tc.received;
    };
    if (deficit(r, l) > deficit(l, r)) {
      where = direction(*remote, r, local, l);
    } else {
      where = direction(local, l, *remote, r);
      if (where.empty()) where = direction(*remote, r, local, l);
    }
    if (where.empty() && l.sent && r.sent && *l.sent == 0 && *r.sent == 0) {
      lost = true;
      where = "neither " + local.device + " nor " + remote->device +
              " sent a packet during the proof: " + WhyLost(local, &*remote);
    } else if (where.empty() && l.sent && r.received) {
      where = local.device + " sent " + Packets(*l.sent) + " and " + remote->device + " received " +
              std::to_string(*r.received) + ": the packets arrive";
      // A port that went down between two packets lost none, and still
      // failed the proof: a path loss whatever the counters.
      if (std::string down = PortNotActive(local, &*remote); !down.empty())
        where += ", but " + down;
      if (auto d = PacketCountsOf(remote->delta).discarded; d && *d > 0) {
        where += ", and " + remote->device + " discarded " + Packets(*d) +
                 " (out of sequence or duplicate: a PSN mismatch?)";
      }
    }
  } else {
    // Alone, a path loss cannot be told from a peer that stopped or went
    // away: the packets' fate is said, not judged (lost stays false).
    if (l.sent && *l.sent > 0) {
      where =
          local.device + " sent " + Packets(*l.sent) + " to " +
          (local.neighbour_address.empty() ? std::string("the peer") : local.neighbour_address) +
          "; the peer's counters are unknown (it did not answer): " + WhyLost(local, nullptr);
    } else if (l.sent) {
      where = local.device +
              " sent no packet; the peer's counters are unknown: " + WhyLost(local, nullptr);
    } else {
      where = "the peer's counters are unknown (it did not answer)";
    }
  }
  auto down = [](const std::string& state) { return !state.empty() && state != "ACTIVE"; };
  v.path_broken = (lost && IsPathCause(v.cause)) || down(local.port_state) ||
                  (remote && down(remote->port_state));
  if (!where.empty()) text += ": " + where;
  v.text = std::move(text);
  return v;
}

}  // namespace qpconnect
