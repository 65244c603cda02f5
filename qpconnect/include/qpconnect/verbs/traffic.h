// Proof by traffic: after both sides reached RTS (and passed the barrier),
// ping-pong SEND/RECV of `size` bytes for `iters` iterations on every QP with
// content checked both ways; then, per QP, RDMA WRITE into the peer's buffer
// (RC, UC) and RDMA READ from it (RC), checked on both sides.
//
// Every wait is bounded by `timeout` and sleeps after a short spin (bounded
// back-off, verbs/completion.h) instead of burning a core; a failed completion
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

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect::verbs {

enum class Role : uint8_t { kClient, kServer };  // the client sends first

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
  // Told after each ping-pong round on a QP ("traffic", rounds done, iters x
  // QPs). May be empty.
  ProgressFn on_progress;
};

struct TrafficReport {
  uint64_t messages = 0;  // SENDs completed by this side
  uint64_t bytes = 0;     // bytes sent + received in the ping-pong
  double seconds = 0;     // ping-pong wall time
  double avg_rtt_us = 0;  // per round trip
  double mbit_per_s = 0;  // (bytes sent + received) / seconds
  bool rdma_write_checked = false;
  bool rdma_read_checked = false;
};

// The byte pattern for `seed`, written into `n` bytes at `out`.
void FillPattern(uint8_t* out, uint32_t n, uint32_t seed);
// Index of the first byte of `data` that differs from the pattern, or -1.
long FindPatternMismatch(const uint8_t* data, uint32_t n, uint32_t seed);

// The stock pingpong -c content of `n` bytes (see TrafficPattern::kPingpong).
void FillPingpongContent(uint8_t* out, uint32_t n);

// REQUIRES: session.Connect() succeeded with `remote`, and the peer is at RTS
// (barrier passed). kTraffic (failed completion, wrong length, content
// mismatch: the offset is named), kTimeout, kVerbs (post failed), or the
// watch's code when it reports the peer gone.
Result<TrafficReport> RunTraffic(Session& session, const EndpointInfo& remote, Role role,
                                 const TrafficOptions& options);

}  // namespace qpconnect::verbs
