// SPDX-License-Identifier: MIT
// The out-of-band exchanger interface: swap endpoint descriptions with the
// peer over some channel other than the QP itself, within one deadline.
//
// It lives in core so that the connector (connector.h) can drive any exchanger
// without knowing its wire format. Implementations are in qpconnect::oob:
// tcp.h (Boost.Asio), file.h (a shared directory), stdio.h (a line of text
// over standard input/output) and channel.h (the same protocol over a byte
// channel an embedding program supplies as two functions).
//
// Thread-safety: an Exchanger is used by one thread at a time, except
// Cancel(), which any thread may call at any time, also while another thread
// is inside Exchange() or Barrier().
#pragma once

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"

namespace qpconnect {

// Exchanger::stats(): frames and their bytes, each direction.
struct ExchangeStats {
  uint64_t frames_sent = 0;
  uint64_t frames_received = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

class Exchanger {
 public:
  virtual ~Exchanger() = default;

  // Publishes `local` and returns the peer's description. Errors:
  //   kTimeout   nothing (or not all) arrived within `deadline`
  //   kProtocol  the peer's message failed to decode, or broke the framing
  //   kIncompatible  unsupported version
  //   kAuth      integrity check failed (PSK configured: missing/bad HMAC, replay)
  //   kIo        the channel failed (connection refused/reset, file error);
  //              with errno ECANCELED: Cancel() or the process-wide
  //              interrupt flag (oob/interrupt.h) ended the wait (IsCancelled())
  virtual Result<EndpointInfo> Exchange(const EndpointInfo& local,
                                        std::chrono::milliseconds deadline) = 0;

  // Optional, before Exchange(): sets the channel up and greets the peer now
  // (tcp: connects or accepts, then the hellos and, with a PSK, the key
  // confirmation), so that a caller can do it while it opens its device, and
  // the next Exchange() starts with the descriptions. Errors as Exchange()'s
  // before any description is sent; after an error the next Exchange()
  // starts over. Calling Exchange() without it does everything, as before.
  // The default does nothing (the channel has no set-up worth overlapping).
  virtual Result<void> Prepare(std::chrono::milliseconds deadline) {
    (void)deadline;
    return Ok();
  }

  // Tells the peer this side reached `stage` (e.g. "rts") and waits until the
  // peer says the same. REQUIRES: a successful Exchange() before. Errors as
  // Exchange(); kProtocol if the peer reports a different stage or an abort.
  virtual Result<void> Barrier(std::string_view stage, std::chrono::milliseconds deadline) = 0;

  // Tells the peer this side gives up (e.g. "ibv_modify_qp RTR failed"), best
  // effort within `deadline`: the peer's pending or next Exchange() or
  // Barrier() fails with kProtocol "the peer aborted: <reason>" instead of
  // waiting for its deadline. Reports nothing. The default does nothing.
  virtual void Abort(std::string_view reason, std::chrono::milliseconds deadline) {
    (void)reason;
    (void)deadline;
  }

  // Cancels this exchanger from any thread (thread-safe; the one call that
  // may overlap another). The pending Exchange(), Barrier() or PollPeer(),
  // or the next one, fails within about 100 ms with kIo, errno ECANCELED,
  // detail "cancelled: <reason>" (IsCancelled() tells it from a timeout);
  // where a session is under way the peer is sent an abort with `reason`
  // first, so its pending or next call fails with kProtocol "the peer
  // aborted: <reason>". Final: every later call fails the same way (Abort()
  // and the destructor still work); make a new exchanger to start again.
  // What each exchanger can interrupt (a caller's channel, files) is in
  // docs/oob.md, "Cancelling". The default does nothing: an exchanger of
  // your own that cannot be cancelled.
  virtual void Cancel(std::string_view reason) { (void)reason; }

  // Without waiting: whether the peer is known to have gone or given up since
  // the last successful Exchange() or Barrier(), for a caller that waits on
  // something else meanwhile (completions during traffic) and checks now and
  // then. Ok: nothing known. Otherwise the reason, as the next Barrier() would
  // report it: kIo (the peer closed or reset the channel, its process died),
  // kProtocol (the peer aborted: <reason>), kAuth. A message the peer sent
  // meanwhile (its next barrier) is kept for the next Barrier(). The default
  // knows nothing: Ok.
  virtual Result<void> PollPeer() { return Ok(); }

  // Barrier() carrying a short note each way (a failed proof's port
  // counters, proof_failure.h): sends `stage` and `note`, waits for the
  // peer's barrier of the same stage and returns the note it carries (empty
  // when it carries none). `note`: printable ASCII, at most kMaxBarrierNote
  // bytes (else kInvalidArgument). Errors as Barrier(). The default cannot
  // carry notes: kInvalidArgument.
  static constexpr size_t kMaxBarrierNote = 1500;
  virtual Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                              std::chrono::milliseconds deadline) {
    (void)stage;
    (void)note;
    (void)deadline;
    return Error{ErrorCode::kInvalidArgument, 0, "barrier", "",
                 "this exchanger cannot carry a note with a barrier"};
  }

  // Without waiting, after PollPeer() returned Ok (during traffic): the stage
  // of the barrier the peer already sent, which PollPeer() kept for the next
  // Barrier() (not taken by this call); nullopt when none waits. A side whose
  // proof failed says so this way ("proof-failed", traffic_proof.h) while its
  // peer still waits for a completion. The default knows none: nullopt.
  virtual std::optional<std::string> PeerStage() { return std::nullopt; }

  // What this exchanger moved since it was created, as frames (header,
  // payload and trailer: docs/oob.md), in both directions. The channel's own
  // framing under them (stdio's text line, the file exchanger's files) is
  // not counted. The default moved nothing it knows of.
  virtual ExchangeStats stats() const { return {}; }
  // After a successful Exchange(): the two ends of the channel as GIDs (IPv4
  // as ::ffff:a.b.c.d), this side's first, for the joint GID choice
  // (gid_pair.h prefers the pair the channel ran over). The default, and a
  // channel without addresses (files, stdio): empty.
  virtual std::vector<Gid> Addresses() const { return {}; }
};

// True for the error of a wait that Cancel() or the process-wide interrupt
// flag ended (kIo with errno ECANCELED), as opposed to a timeout or a peer's
// failure.
inline bool IsCancelled(const Error& e) {
  return e.code == ErrorCode::kIo && e.sys_errno == ECANCELED;
}

}  // namespace qpconnect
