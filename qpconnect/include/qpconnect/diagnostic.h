// SPDX-License-Identifier: MIT
// Findings: what the validator reports about a pair of endpoints.
//
// A Finding names one rule (a stable kebab-case id, documented in
// docs/rules.md and never reused), how bad its violation is, the attribute at
// fault in verbs terms ("rq_psn", "dest_qp_num", "path_mtu", ...), which side
// and which QP it concerns, the values on both sides, a one-line explanation
// and a concrete fix. Findings are diagnostics, not errors: the caller decides
// (the connector refuses to connect when any has Severity::kError).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"

namespace qpconnect {

enum class Severity : uint8_t {
  kInfo = 0,     // a fact worth knowing, or a rule that could not be checked
  kWarning = 1,  // likely to hurt (hangs, long waits, fragile setups); not fatal by itself
  kError = 2,    // the QPs will not connect or will not exchange traffic
};

// Which side a finding is about. A rule that compares X with Y is checked in
// both directions; the finding names X, the side whose attribute is judged.
enum class Direction : uint8_t {
  kBoth = 0,    // a property of the pair (e.g. the two transports differ)
  kLocal = 1,   // the local side's attribute or port (X = local, Y = remote)
  kRemote = 2,  // the remote side's attribute or port (X = remote, Y = local)
};

const char* SeverityName(Severity s);    // "error", "warning", "info"
const char* DirectionName(Direction d);  // "both", "local", "remote"

// A set of transports, e.g. the transports a rule applies to.
class TransportSet {
 public:
  constexpr TransportSet() = default;
  constexpr TransportSet(std::initializer_list<Transport> transports) {
    for (Transport t : transports) bits_ = static_cast<uint8_t>(bits_ | Bit(t));
  }
  constexpr bool Has(Transport t) const { return (bits_ & Bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  // Members in rc, uc, ud order.
  std::vector<Transport> ToVector() const;
  // "rc,uc,ud"; "" when empty.
  std::string ToString() const;

  friend constexpr bool operator==(TransportSet, TransportSet) = default;

 private:
  static constexpr uint8_t Bit(Transport t) {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(t));
  }
  uint8_t bits_ = 0;
};

inline constexpr TransportSet kAllTransports{Transport::kRc, Transport::kUc, Transport::kUd};

struct Finding {
  std::string id;  // rule id, e.g. "psn-mismatch"
  Severity severity = Severity::kError;
  // True when the rule could not be checked because a fact was unknown (an
  // empty GID table, an unspecified link layer, ...); severity is then kInfo.
  bool unchecked = false;
  TransportSet transports;  // transports the rule applies to
  std::string attribute;    // verbs name of the attribute at fault: "rq_psn", "dgid", ...
  Direction direction = Direction::kBoth;
  // Position (in EndpointInfo::qps) of the QP concerned; empty for findings
  // about a port, a side or the pair.
  std::optional<uint32_t> qp_index;
  // Further QPs with the same finding that are not listed separately: either
  // identical (same values) to this one, or, for a summary finding (no
  // qp_index, empty values), distinct ones beyond the listing cap.
  uint32_t more_qps = 0;
  std::string local_value;   // the value on the local side; empty if n/a
  std::string remote_value;  // the value on the remote side; empty if n/a
  std::string message;       // one line: what is wrong and what it leads to
  std::string fix;           // one line: what to change

  friend bool operator==(const Finding&, const Finding&) = default;
};

// One line for humans:
// "error psn-mismatch rq_psn [local, qp 3]: <message> (local=.. remote=..); fix: <fix>".
std::string FindingToString(const Finding& finding);

// True if any finding has Severity::kError.
bool HasErrors(const std::vector<Finding>& findings);

// Number of findings with severity `s`.
size_t CountSeverity(const std::vector<Finding>& findings, Severity s);

}  // namespace qpconnect
