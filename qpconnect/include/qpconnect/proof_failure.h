// SPDX-License-Identifier: MIT
// A failed traffic proof, explained (issue 31 item 3): what the work
// completion said (ProofCause), how long the QP's retries could last
// (RetryBudget), the port counters of both sides over the proof
// (PortCounters, before and after), and where the packets stop
// (ExplainProof: "rxe1 sent 8 packets to 10.99.0.1 and rxe0 received none:
// the neighbour entry for 10.99.0.1 on veth1 is 02:00:00:00:00:99 PERMANENT,
// the peer's veth0 is 02:00:0a:63:00:01").
//
// Each side describes what it saw as a ProofSide, sends it to the peer as a
// note over the out-of-band channel (EncodeProofNote, a barrier's note,
// exchanger.h) and explains the failure from both sides' notes; a side whose
// peer did not answer explains from its own alone. The verbs layer reads the
// counters and the path facts and drives the exchange
// (qpconnect/verbs/proof_witness.h); this file only judges.
//
// Thread-safety: plain values and pure functions. Part of qpconnect::core.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"

namespace qpconnect {

// Why the proof failed, as this side saw it.
enum class ProofCause : uint8_t {
  kRetryExceeded,         // IBV_WC_RETRY_EXC_ERR: no ACK within the retry budget
  kRnrRetryExceeded,      // IBV_WC_RNR_RETRY_EXC_ERR: the receiver had no receive posted
  kRemoteAccess,          // IBV_WC_REM_ACCESS_ERR
  kRemoteInvalidRequest,  // IBV_WC_REM_INV_REQ_ERR
  kRemoteOperation,       // IBV_WC_REM_OP_ERR
  kLocalProtection,       // IBV_WC_LOC_PROT_ERR
  kLocalLength,           // IBV_WC_LOC_LEN_ERR
  kLocalQpOperation,      // IBV_WC_LOC_QP_OP_ERR: rxe's answer to a send on a port gone DOWN
  kResponseTimeout,       // IBV_WC_RESP_TIMEOUT_ERR
  kFlushed,               // IBV_WC_WR_FLUSH_ERR: the QP was already in error
  kOtherStatus,           // another failed status
  kNoCompletion,          // no completion at all within the retry budget plus a grace
  kPeerFailed,            // this side saw nothing wrong; the peer's proof failed
};

// "retry-exceeded", "rnr-retry-exceeded", "remote-access",
// "remote-invalid-request", "remote-operation", "local-protection",
// "local-length", "local-qp-operation", "response-timeout", "flushed",
// "completion-error",
// "no-completion", "peer-failed".
const char* ProofCauseName(ProofCause cause);
std::optional<ProofCause> ProofCauseFromName(std::string_view name);
// What the cause means in a few words: "the path is broken (no ACK came
// back)", "the receiver was not ready (no receive posted)", ...
const char* ProofCauseMeaning(ProofCause cause);
// Causes that say the network path lost packets: retry exhaustion, a
// response timeout and no completion at all.
bool IsPathCause(ProofCause cause);

// How long an RC QP retries an unacknowledged packet: the ACK timeout
// (4.096 us x 2^timeout) times the tries (the first send and retry_cnt
// retries), from the QP's attributes. Unreliable transports have none.
struct RetryBudget {
  bool acknowledged = false;  // RC
  uint8_t timeout = 0;        // 0: the QP waits forever (no budget)
  uint8_t retry_cnt = 0;

  // 0 when there is no budget (not RC, or timeout 0).
  std::chrono::nanoseconds Total() const;
  // "ACK timeout 14 (67.1 ms) x 8 tries = 537 ms", or why there is none.
  std::string Text() const;
};

// A wait after which a proof that got no completion is called stalled: the
// retry budget plus this grace (issue 31: both sides report within 3 s after
// the budget ran out).
// 1.5 s: under heavy load a starved guest once went a whole second without a
// completion while its packets arrived (lab_proof_neigh_during); reports still
// come about 1.6 s after the budget.
inline constexpr std::chrono::milliseconds kProofStallGrace{1500};
// The stall for `budget`: Total() + kProofStallGrace.
std::chrono::milliseconds ProofStall(const RetryBudget& budget);

// A port's counters as the kernel has them (rxe: sysfs hw_counters; other
// devices: counters/ too), by their kernel names, in the order read.
struct PortCounters {
  std::string device;
  uint32_t port = 0;
  std::string state;  // "ACTIVE", "DOWN", ...; empty unknown
  std::vector<std::pair<std::string, uint64_t>> values;
  std::string unknown;  // why there are no values (empty when there are)

  std::optional<uint64_t> Get(std::string_view name) const;
};

// after - before, per counter present in both (a counter that went back,
// a reset, counts 0); device, port and state from `after`.
PortCounters CounterDelta(const PortCounters& before, const PortCounters& after);

// The counters that say where packets go, by the names devices give them:
// packets sent (rxe sent_pkts, counters/port_xmit_packets), received
// (rcvd_pkts, port_rcv_packets), retried (completer_retry_err,
// local_ack_timeout_err) and discarded (out of sequence, duplicate, receive
// errors: their sum). nullopt when the device has none of the names.
struct PacketCounts {
  std::optional<uint64_t> sent, received, retried, discarded;
};
PacketCounts PacketCountsOf(const PortCounters& counters);

// What one side saw of a failed proof: sent to the peer as a note.
struct ProofSide {
  ProofCause cause = ProofCause::kNoCompletion;
  std::string device;
  uint32_t port = 0;
  std::string port_state;  // at failure time; empty unknown
  std::string address;     // the address this side sends from (its GID's)
  std::string netdev;      // its GID's netdev
  std::optional<MacAddress> netdev_mac;
  // Its neighbour entry for the peer's address (or gateway) at failure time.
  std::string neighbour_address;
  std::optional<MacAddress> neighbour_mac;
  std::string neighbour_state;   // "PERMANENT", ...; empty when there is none
  std::string neighbour_reason;  // why there is none
  PortCounters delta;            // over the proof (after - before)
  // Milliseconds from the end of the retry budget (from the post of the
  // work request that failed or stalled) to this side's report; nullopt
  // when unknown (a side that only heard of its peer's failure).
  std::optional<int64_t> after_budget_ms;
};

// The side as facts read at failure time: its counters' delta and the
// kernel's path facts (the neighbour entry and the netdev).
ProofSide MakeProofSide(ProofCause cause, PortCounters delta,
                        const std::optional<RocePathFacts>& path);

// A note of printable ASCII, at most 1500 bytes (Exchanger::
// kMaxBarrierNote): "key=value;..." with ';', '=' and '%' escaped; counters
// beyond what fits are left out (the ones that say where packets go first).
std::string EncodeProofNote(const ProofSide& side);
// kProtocol for a note that does not decode (unknown cause, bad number).
Result<ProofSide> DecodeProofNote(std::string_view note);

struct ProofVerdict {
  // This side's, or the peer's when ours is kPeerFailed.
  ProofCause cause = ProofCause::kNoCompletion;
  // The path lost the proof's packets: a path cause with packets lost in
  // both sides' counters (a peer that did not answer leaves it false: a
  // stopped or vanished peer looks the same), or a port not ACTIVE on either
  // side (whatever the status).
  bool path_broken = false;
  // "retry-exceeded (the path is broken): rxe1 sent 8 packets to 10.99.0.1
  // and rxe0 received none: ..."
  std::string text;
  // One line per side: "rxe1 port 1 (ACTIVE): sent 8, received 0, retried
  // 7, discarded 0 (sent_pkts +8, ...)".
  std::vector<std::string> counters;
};

// Where the packets stop, from both sides' notes (`remote` nullopt: the
// peer did not answer; then from this side's alone).
ProofVerdict ExplainProof(const ProofSide& local, const std::optional<ProofSide>& remote);

}  // namespace qpconnect
