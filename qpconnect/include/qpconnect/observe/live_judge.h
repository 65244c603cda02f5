// SPDX-License-Identifier: MIT
// The live judge: why two connected QPs do not talk, from what the kernel
// shows of them while they run (a snapshot, snapshot.h), not from what their
// programs meant to configure (that is the validator, validate.h).
//
// JudgeLive() takes the observed QPs and their pairing (pairing.h) and judges
// every RC/UC pair, and every RC/UC QP whose rqpn names a QP it is not paired
// with (as pairing named it; QPs pairing left ambiguous are not judged), by
// the live rules:
//   state       one side in ERR/SQE (qp-error-state) or RESET/INIT
//               (qp-not-connected), or gone (peer-qp-gone);
//   addressing  an rqpn naming a QP that is connected to another
//               (rqpn-dangling);
//   PSN window  the receiver expects PSNs its sender has not sent
//               (psn-receiver-ahead), or the sender is ahead by more than can
//               be in flight (psn-sender-ahead);
//   progress    the PSNs stuck across the samples while the sender has
//               packets outstanding (psn-stalled);
//   receiver    RNR NAKs rising and a receiver that posts no receives, e.g. a
//               stopped process (receiver-not-ready); a stopped or zombie
//               process on an otherwise quiet pair (process-stopped).
// Port counters (duplicate, out-of-sequence, retry, RNR) and process states
// corroborate: they are named in each finding's evidence. Counters are per
// port, not per QP, so the evidence says which port they come from.
// LiveRuleCatalogue() lists the rules; docs/rules.md documents each one.
//
// Cost is O(N) in the number of QPs and ports (hash lookups by QPN).
//
// Thread-safety: pure functions; the catalogue is immutable static data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/pairing.h"
#include "qpconnect/validate.h"

namespace qpconnect {

struct LiveJudgeOptions {
  // The most PSNs a sender may have outstanding (sent, not yet accepted by
  // its receiver) before "sender ahead" is judged a PSN mismatch rather than
  // traffic in flight or lost: the send queue depth times the packets per
  // message, which the kernel does not show. 65536 covers perftest's defaults
  // (128 WRs of 64 KiB at a 1024-byte MTU: 8192 packets) eight times over.
  uint32_t max_in_flight_psns = 65536;
  // With one sample the PSNs of the two sides are read a moment apart, so a
  // receiver can seem ahead of a busy sender by the packets sent in between;
  // smaller gaps are not judged from one sample.
  uint32_t single_sample_slack_psns = 64;
  // PSNs frozen for less than this prove nothing (a retransmission after the
  // ACK timeout, 67 ms at the usual timeout 14, may still come): samples
  // closer than this are judged as one sample.
  double min_stuck_seconds = 0.5;
};

struct LiveFinding {
  // id, severity, transports and attribute as in the catalogue; direction is
  // kBoth; local_value is the judged QP's value, remote_value its peer's.
  Finding finding;
  size_t qp = 0;               // index in Observation::qps of the QP judged
  std::optional<size_t> peer;  // its peer's index, when the peer is observed
  // Corroborating facts, one line each: "rq_psn frozen at 2681266 across 1.0 s",
  // "duplicate_request +57 on rxe0 port 1 in 1.0 s (per port)", ...
  std::vector<std::string> evidence;
};

// What the judge says about one pair.
struct LivePairVerdict {
  ObservedPair pair;
  // One line: "moving: rxe0 QP 17 sent +1800 PSNs, rxe1 QP 17 +1800 in 1.0 s",
  // "idle: nothing outstanding", "stuck", "one sample: progress unknown", ...
  std::string progress;
  bool sound = true;  // no error or warning finding names this pair
};

struct LiveReport {
  std::vector<LivePairVerdict> pairs;  // in the order of Pairing::pairs
  // Errors first, then warnings, then notes; within a severity in pair order.
  std::vector<LiveFinding> findings;
};

// Judges the pairs of `pairing` (computed on `observation`) and the RC/UC QPs
// it left dangling. Pairs with no side from a snapshot are skipped (the
// validator judges traces and dumps); UD and kernel QPs are not judged.
// REQUIRES: pairing's indexes are valid in observation.qps.
LiveReport JudgeLive(const Observation& observation, const Pairing& pairing,
                     const LiveJudgeOptions& options = {});

// Every live rule, in the order JudgeLive() checks them. Ids are unique and
// distinct from RuleCatalogue()'s; family is "live" (qpconnect/src/observe/
// live_judge.cc).
std::span<const RuleInfo> LiveRuleCatalogue();

// The live rule with `id`; nullptr if there is none.
const RuleInfo* FindLiveRule(std::string_view id);

// "rxe0 QP 17 (pid 812 ibv_rc_pingpong)": how findings name a QP. Kernel QPs
// read "(kernel, ib_core)"; with `with_host`, a known host comes first
// ("node7:rxe0 QP 17 ..."). JudgeLive() names hosts when the QPs come from
// more than one.
std::string DescribeObservedQp(const ObservedQp& qp, bool with_host = true);

// A /proc state letter in words: "T" -> "stopped", "Z" -> "a zombie (exited,
// not reaped)", "S" -> "sleeping", ...
std::string ProcessStateWords(const std::string& process_state);

// True for a process that neither posts nor polls: stopped ("T"), stopped by
// a tracer ("t") or a zombie ("Z").
bool IsStoppedState(const std::string& process_state);

}  // namespace qpconnect
