// SPDX-License-Identifier: MIT
// Proof by traffic: after both sides reached RTS (and passed the barrier),
// ping-pong SEND/RECV of `size` bytes for `iters` iterations on every QP with
// content checked both ways; then, per QP, RDMA WRITE into the peer's buffer
// (RC, UC) and RDMA READ from it (RC), checked on both sides.
//
// The client leads (kQpc pattern): its SENDs carry an immediate value, the
// iteration (low 31 bits) and a last-round flag (bit 31) set on every QP's
// message of the final iteration; the server ends a ping-pong after the
// iteration whose flag is set, whatever its own `iters` or `duration` say, so
// both sides stop together in duration mode too. A peer whose SENDs carry no
// immediate (an older qpconnect) is followed for `iters` iterations, as before.
//
// Measured per ping-pong (one per size): one timestamp per round, at the
// receive completion; a round's latency sample is the time since the previous
// round's (the client's first round: since its first SEND was posted; the
// server's first round has none, as the client's start is not seen). With N
// QPs a round is one QP's SEND and reply, so a sample is one round trip.
//
// Every wait is bounded by `timeout` and sleeps after a short spin (bounded
// back-off, verbs/completion.h) instead of burning a core, or, when the
// session was opened with completion_events, sleeps on its completion
// channel until an event; a failed completion
// is a kTraffic error whose detail names the likely cause. With a `watch`
// (the out-of-band exchanger's PollPeer()), a wait that lasts checks it every
// `watch_interval`, so a peer that died or gave up is reported within about
// that long ("the peer went away during traffic (ping-pong): ...") instead
// of at the deadline.
//
// Thread-safety: one thread per Session.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "qpconnect/traffic_stats.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect::verbs {

enum class Role : uint8_t { kClient, kServer };  // the client sends first

// What a failed proof left for its explanation (proof_witness.h): the
// failed completion's status, or that a wait stalled, and when the wait that
// ended it began.
struct ProofTrace {
  std::optional<ibv_wc_status> status;  // a completion failed with it
  bool stalled = false;                 // no completion within TrafficOptions::stall
  std::chrono::steady_clock::time_point wait_start{};
};

// What the ping-pong carries and checks.
//   kQpc       both sides send a pattern per iteration, sender and QP, and
//              check the peer's (our own dialect).
//   kPingpong  the stock ibv_*_pingpong loop: the server echoes every message
//              it receives (the stock programs send and receive from one
//              buffer); the client sends the stock -c content (0x7b, with a zero
//              at the start of every 4096-byte page) and checks the echo.
enum class TrafficPattern : uint8_t { kQpc, kPingpong };

struct TrafficOptions {
  uint32_t iters = 1000;
  uint32_t size = 4096;                           // REQUIRES: <= the session's message_size
  std::chrono::milliseconds timeout{10000};       // per wait
  bool rdma = true;                               // RDMA WRITE (RC, UC) and READ (RC) phase
  TrafficPattern pattern = TrafficPattern::kQpc;  // kPingpong: no RDMA phase either
  // Checked while a wait lasts (about every watch_interval): an error ends the
  // traffic with that error, its operation naming the wait, its detail "the
  // peer went away during traffic (<phase>): <the watch's error>" (or "the
  // peer aborted during traffic ..."), its code the watch's.
  std::function<Result<void>()> watch;
  std::chrono::milliseconds watch_interval{100};
  // A wait with no completion for this long (> 0; shorter than `timeout`)
  // ends the traffic as stalled: kTraffic "no completion within ..." (the
  // QP's retry budget plus a grace, proof_failure.h's ProofStall), instead
  // of waiting for `timeout`. 0: only `timeout`.
  std::chrono::milliseconds stall{0};
  // Filled when the traffic fails, if set.
  ProofTrace* trace = nullptr;
  // Told after each ping-pong round on a QP ("traffic", rounds done, iters x
  // QPs; per size with `sweep`; not in duration mode). May be empty.
  ProgressFn on_progress;
  // Duration mode (the client; > 0): iterations go on until this long has
  // passed since the ping-pong started (checked before each iteration, so at
  // least one runs), instead of `iters`. REQUIRES: pattern kQpc.
  std::chrono::milliseconds duration{0};
  // Size sweep (perftest -a): one ping-pong for each size of SweepSizes(size)
  // (2, 4, ..., size), each measured; the RDMA phase then runs at `size`.
  // Both sides must sweep. REQUIRES: pattern kQpc, size >= 2.
  bool sweep = false;
  // Latency samples kept per ping-pong, split evenly over the QPs (at least
  // 64 each): bounded memory for long duration runs (traffic_stats.h).
  size_t latency_samples = size_t{1} << 22;
};

// One QP in one ping-pong.
struct QpTrafficStats {
  LatencySummary rtt;  // per round trip on this QP
};

// One ping-pong (one per size with `sweep`). Each iteration is one round trip
// on every QP: SEND and reply of `size` bytes each way.
struct SizeTrafficStats {
  uint32_t size = 0;
  uint64_t iterations = 0;  // round trips per QP
  double seconds = 0;       // wall time of this ping-pong
  LatencySummary rtt;       // every QP's round trips
  std::vector<QpTrafficStats> qps;
};

struct TrafficReport {
  uint64_t messages = 0;    // SENDs completed by this side
  uint64_t bytes = 0;       // bytes sent + received in the ping-pong
  double seconds = 0;       // ping-pong wall time (every size)
  double avg_rtt_us = 0;    // per round trip
  double mbit_per_s = 0;    // (bytes sent + received) / seconds
  uint64_t iterations = 0;  // ping-pong iterations run (every size)
  // Completion events taken while waiting (sessions with completion_events:
  // the waits sleep on the completion channel; 0 without).
  uint64_t completion_events = 0;
  bool rdma_write_checked = false;
  bool rdma_read_checked = false;
  std::vector<SizeTrafficStats> sizes;  // in the order run; one without `sweep`
};

// The byte pattern for `seed`, written into `n` bytes at `out`.
void FillPattern(uint8_t* out, uint32_t n, uint32_t seed);
// Index of the first byte of `data` that differs from the pattern, or -1.
long FindPatternMismatch(const uint8_t* data, uint32_t n, uint32_t seed);

// The stock pingpong -c content of `n` bytes (see TrafficPattern::kPingpong).
void FillPingpongContent(uint8_t* out, uint32_t n);

// REQUIRES: session.Connect() succeeded with `remote`, and the peer is at RTS
// (barrier passed). kInvalidArgument for a size, duration or sweep the
// options cannot run (see TrafficOptions); kTraffic (failed completion, wrong length, content
// mismatch: the offset is named), kTimeout, kVerbs (post failed), or the
// watch's code when it reports the peer gone.
Result<TrafficReport> RunTraffic(Session& session, const EndpointInfo& remote, Role role,
                                 const TrafficOptions& options);

}  // namespace qpconnect::verbs
