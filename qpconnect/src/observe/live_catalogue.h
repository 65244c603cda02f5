// SPDX-License-Identifier: MIT
// Private to the live judge: the live rule catalogue as a constexpr table, so
// that the rule code names each rule by its id and the compiler checks that
// the id exists (LiveRule("psn-stalled")). docs/rules.md's "Live rules"
// section is generated from this table (`qp-validate --list-rules
// --markdown`); a unit test keeps the two in step.
//
// Sources: "IBA" is the InfiniBand Architecture Specification vol. 1, by
// chapter; man pages are rdma-core's and the Linux man-pages project's; "lab"
// marks a symptom measured in the Soft-RoCE lab with stock programs
// (docs/inspect.md).
#pragma once

#include <array>
#include <string_view>

#include "qpconnect/validate.h"

namespace qpconnect::live_internal {

inline constexpr TransportSet kRcUc{Transport::kRc, Transport::kUc};
inline constexpr TransportSet kRcOnly{Transport::kRc};
inline constexpr Severity E = Severity::kError;
inline constexpr Severity W = Severity::kWarning;

// In the order JudgeLive() checks them.
inline constexpr std::array<RuleInfo, 10> kLiveRules = {{
    {"peer-qp-gone", E, kRcUc, "rqpn", "live",
     "The QP a connected QP's rqpn names still exists: it is in the last sample. A peer in no "
     "input is judged gone only when the connected QP shows it unreachable (RC: its rq_psn "
     "frozen and its sq_psn frozen, gone back to retransmit, or sending while its port hears "
     "nothing, while the retry counters of its port rise); otherwise the rule is unchecked.",
     "The survivor stays in RTS and its program waits: RC retries each send until retry_cnt is "
     "spent (IBV_WC_RETRY_EXC_ERR) while completer_retry_err rises; UC sends vanish.",
     "IBA ch. 9.7.6 (requester: timeout and retry); rdma res show qp (the tracker drops a QP when "
     "it is destroyed or its process exits); lab: a killed ib_send_bw receiver"},
    {"qp-error-state", E, kRcUc, "qp_state", "live",
     "Neither QP of a connected pair is in ERR or SQE.",
     "Every posted WR completes with IBV_WC_WR_FLUSH_ERR; the peer's sends are not acknowledged "
     "(RC retry exceeded) or are lost (UC). Only a transition through RESET revives the QP.",
     "ibv_modify_qp(3) (QP states); IBA ch. 10.3 (QP state machine: a completion error moves the "
     "QP to the Error state)"},
    {"qp-not-connected", E, kRcUc, "qp_state", "live",
     "A QP that a connected QP's rqpn names is past INIT (RTR or RTS): it was given its peer and "
     "can receive.",
     "The peer's packets reach a QP in RESET or INIT, which drops them: RC retry exceeded, UC "
     "silent loss. Usually its program failed or stopped before ibv_modify_qp to RTR.",
     "ibv_modify_qp(3) (a QP receives from RTR on); IBA ch. 10.3 (QP state machine)"},
    {"rqpn-dangling", E, kRcUc, "dest_qp_num", "live",
     "The QP a connected QP's rqpn names points back at it: its own rqpn is this QP, and it is "
     "not connected to a third QP.",
     "Packets reach a QP that is connected elsewhere: its PSN sequence and address checks do not "
     "match them, so they are dropped or NAKed (RC retry exceeded), or they disturb the other "
     "connection.",
     "seed (dest_qp_num(X) == qp_num(Y)); IBA ch. 9.6 (packet transport header validation)"},
    {"psn-receiver-ahead", E, kRcOnly, "rq_psn", "live",
     "A receiver does not expect PSNs its sender has not sent: its rq_psn is not ahead of the "
     "sender's sq_psn (with two samples, while it stays frozen; with one, by more than a read "
     "race can explain).",
     "Every packet carries a PSN the receiver takes for a duplicate: it acknowledges and discards "
     "it (duplicate_request rises) and nothing is delivered; both QPs stay in RTS and the "
     "programs wait forever.",
     "IBA ch. 9.7.5.1 (responder: duplicate detection by PSN); lab: ibv_rc_pingpong with rq_psn "
     "999 ahead"},
    {"psn-sender-ahead", E, kRcOnly, "sq_psn", "live",
     "A sender with packets stuck is not ahead of its receiver's expected PSN by more than can "
     "be in flight (LiveJudgeOptions::max_in_flight_psns), and the pair does not show the NAK "
     "loop of a mismatch: out-of-sequence NAKs rising on the receiver's port while sequence "
     "errors rise on the sender's.",
     "The receiver sees PSNs beyond the one it expects: it NAKs them as out of sequence "
     "(out_of_seq_request / out_of_sequence rises) and drops them; the sender cannot resend what "
     "it never sent and ends in IBV_WC_RETRY_EXC_ERR, or hangs.",
     "IBA ch. 9.7.5.1 (responder: PSN sequence error NAK); ibv_modify_qp(3) (sq_psn, rq_psn)"},
    {"psn-stalled", E, kRcOnly, "sq_psn", "live",
     "A sender that retries (its port's retry counters rise) gets its outstanding packets "
     "accepted: packets outstanding at the first sample are accepted by the last, samples at "
     "least LiveJudgeOptions::min_stuck_seconds apart.",
     "The packets never reach the receiving QP, or are dropped before its PSN check (path MTU, "
     "GID or route wrong, a link down, a firewall on UDP 4791): the sender retries (retry "
     "counters rise) until IBV_WC_RETRY_EXC_ERR, or forever with timeout 0.",
     "IBA ch. 9.7.6 (requester: the transport timer and retries)"},
    {"receiver-not-ready", E, kRcOnly, "recv_wr", "live",
     "A receiver keeps receives posted: no RNR NAKs rise on the pair's ports while its process "
     "is stopped (T) or a zombie (Z), or while its sender's packets are stuck; and a receiver "
     "with packets stuck is not stopped.",
     "The receiver answers each SEND with an RNR NAK (send_rnr_err rises on its port, "
     "rcvd_rnr_err on the sender's): with rnr_retry 7 the sender retries forever, otherwise it "
     "ends in IBV_WC_RNR_RETRY_EXC_ERR.",
     "IBA ch. 9.7.5.2.8 (RNR NAK); ibv_post_recv(3); ibv_modify_qp(3) (rnr_retry); lab: a "
     "SIGSTOPped ib_send_bw receiver"},
    {"process-stopped", W, kRcUc, "process_state", "live",
     "The processes owning a connected pair's QPs are not stopped (T, t) or zombies (Z).",
     "A stopped process neither posts nor polls: its peer's messages pile up until its receives "
     "run out (then RNR NAKs) and its own sends stop; a zombie's QPs are about to be destroyed.",
     "proc(5) (/proc/PID/stat, field 3); signal(7) (SIGSTOP, SIGTSTP)"},
    {"roce-path-broken", E, kRcUc, "dgid", "live",
     "The kernel's path from a connected RoCE QP's port to its peer's (both in the snapshot) "
     "works: each port still has a routable RoCE v2 address, a route to the peer's address "
     "exists, and the neighbour entry of the next hop is resolved (not FAILED or INCOMPLETE) to "
     "the MAC of the peer's netdev.",
     "The QPs stay in RTS while the packets never reach the peer's QP: sent to another MAC, "
     "never sent for want of ARP, or addressed to an address the peer's port no longer has. RC "
     "retries until IBV_WC_RETRY_EXC_ERR (or forever with timeout 0) while sent_pkts rises and "
     "the peer's rcvd_pkts does not; UC loses them. The programs wait.",
     "ip-neighbour(8), ip-route(8), ip-address(8); RoCE v2 (IBTA annex A17): packets are UDP/IP, "
     "routed and resolved by the kernel; lab: a stopped ibv_rc_pingpong pair, then a "
     "permanent neighbour entry with another MAC, or the address removed "
     "(tests/lab/inspect_path_lab.sh)"},
}};

constexpr bool IdsAreUnique() {
  for (size_t i = 0; i < kLiveRules.size(); ++i) {
    for (size_t j = i + 1; j < kLiveRules.size(); ++j) {
      if (kLiveRules[i].id == kLiveRules[j].id) return false;
    }
  }
  return true;
}
static_assert(IdsAreUnique(), "live rule ids must be unique");

// The rule with `id`. An id that is not in the table stops the build.
consteval const RuleInfo& LiveRule(std::string_view id) {
  for (const RuleInfo& r : kLiveRules) {
    if (r.id == id) return r;
  }
  throw "no live rule with this id";  // not a constant expression: a compile error
}

}  // namespace qpconnect::live_internal
