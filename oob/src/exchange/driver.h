// SPDX-License-Identifier: MIT
// The protocol driver: the one place where the out-of-band protocol's
// sequence and checks are written (docs/oob.md). Private to src/exchange.
//
//   Exchange()  [hello <-> hello] -> [confirm <-> confirm, with a PSK]
//               -> description <-> description (ordered)
//   Barrier()   barrier <-> barrier, stage check
//   Abort()     abort ->
//   PollPeer()  non-blocking: has the peer gone or aborted? (during traffic)
//   Cancel()    from any thread: the pending or next call stops (stop.h) and
//               the peer is sent an abort with the reason
//
// It moves frames through a FramePort, which each transport implements: a
// byte stream (StreamPort: tcp and caller-supplied ByteChannels), lines of
// text (stdio), or files in a directory (file). The driver checks this side's
// description, seals and opens every message (handshake.h: binding, sequence
// numbers, PSK), orders the description sends, checks stages and turns the
// peer's abort into an error. A port only moves whole frames and words its
// own waits and failures.
//
// Thread-safety: one thread at a time, but Cancel() from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "handshake.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"
#include "stop.h"

namespace qpconnect::oob::internal {

using Clock = std::chrono::steady_clock;

// Longest abort reason sent; longer ones are cut.
inline constexpr size_t kMaxAbortReasonBytes = 1024;

// How long the abort a Cancel() sends may take (it is a small frame).
inline constexpr std::chrono::milliseconds kAbortAfterCancel{1000};

// Cap on the payload of every frame but a description: hellos (16 bytes),
// confirms (36), barriers (at most 100) and aborts (at most 1,060). Before the
// peer has proved itself (its hello, and with a PSK its key confirmation)
// nothing larger is read.
inline constexpr uint32_t kSmallFramePayloadBytes = 2048;

// What a description of `qps` QPs can take at most, in payload bytes: the
// port-level part (identity, port, path, keys, up to 4096 GIDs) within 1 MiB,
// and at most 64 bytes per QP (QPN delta and PSN varints, an MR descriptor),
// plus the binding. Legitimate descriptions take far less (docs/oob.md).
inline constexpr uint64_t kDescriptionBaseBytes = 1u << 20;
inline constexpr uint64_t kDescriptionBytesPerQp = 64;
uint64_t DescriptionBound(uint64_t qps);

// One message of a call, as the driver asks a port to move it.
struct Step {
  FrameType type = FrameType::kHello;
  // The message's sequence number in its direction: 0 for the hello and the
  // description, N for the N-th barrier (docs/oob.md).
  uint32_t seq = 0;
  Clock::time_point deadline;
  Clock::duration total{};  // the whole call's time, for "within N ms"
  // Cap on the payload of the frame received in this step (checked before
  // anything is allocated for it), and what the cap stands for, appended to
  // an "oversized" error (may be empty).
  uint32_t max_payload = kSmallFramePayloadBytes;
  std::string cap_note{};

  // "hello", "description", "barrier", "abort", "confirm".
  const char* what() const;
  // An "oversized" (attribute "length") error with cap_note appended.
  Error WithCapNote(Error e) const;
};

// How frames travel between the two sides: what a transport implements.
class FramePort {
 public:
  virtual ~FramePort() = default;

  // The channel in errors ("tcp 10.0.0.7:18515", "stdio").
  virtual std::string Name() const = 0;

  // Starts a session, once this side's description has been checked: accept
  // or connect (tcp), clear this side's leftovers (file). Default: nothing.
  virtual Result<void> Open(const Step& step);

  // Hands one whole frame, `bytes`, to the channel. kTimeout, kIo.
  virtual Result<void> Send(const Step& step, std::string_view bytes) = 0;

  // The peer's frame for `step`, or an abort frame it sent instead. Errors
  // (worded by the port): kProtocol/kIncompatible for framing, kIo, kTimeout.
  virtual Result<Frame> Receive(const Step& step) = 0;

  // Called once the frame Receive() returned for `step` has been accepted. A
  // port whose messages are acknowledged (file: the reader deletes them)
  // acknowledges the peer's and waits until the peer took ours. Returns an
  // abort frame that arrived meanwhile, if any. Default: nothing to wait for.
  virtual Result<std::optional<Frame>> Settle(const Step& step);

  // True for a port that can drop the current peer and take another one (a
  // tcp server: close, accept the next client). The driver then rejects a
  // peer that fails before it proved itself and calls Open() again.
  virtual bool AcceptsAnotherPeer() const { return false; }

  // Without waiting: the peer's next frame if all of it is already there, or
  // nullopt when nothing (or only part of a frame) has arrived. An error when
  // the channel is known to be broken: the peer closed it (kIo), its process
  // is gone, a framing error. Part of a frame read here is kept for the next
  // Receive(). Default: nullopt (the port cannot tell).
  virtual Result<std::optional<Frame>> Poll(const Step& step);
};

struct DriverOptions {
  std::optional<Psk> psk;         // both sides need the same key, or neither
  OobRole role = OobRole::kNone;  // declared in every frame; a clash is refused
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  // The most QPs the peer's description may hold; 0: as many as this side's.
  // Its frame is capped at DescriptionBound() of it before it is read.
  uint32_t max_peer_qps = 0;
  // For a port that AcceptsAnotherPeer(): the time a new peer has to prove
  // itself (hello, and with a PSK the key confirmation) before it is
  // rejected, and how many peers one Exchange() rejects before it gives up.
  std::chrono::milliseconds peer_handshake_timeout{5000};
  uint32_t max_rejected_peers = 64;
  SendOrder order = SendOrder::kLowerNonceFirst;
  // False: the hello exchange runs only with a PSK, and without one messages
  // are not bound (stdio: one line each way).
  bool hello_without_psk = true;
  // The port is a set of mailboxes that may still hold an earlier run's
  // messages (file): a hello is only a hint (a PSK mismatch it shows becomes
  // kAuth only if the deadline passes), the peer's nonce is learnt from its
  // bound description, and ours is sent again when it was bound to another.
  bool mailbox = false;
};

// DriverOptions from what every transport's options hold alike: the key
// (moved out of `o`), the payload cap and the cap on the peer's QPs; the rest
// at their defaults, for the transport to set.
template <typename TransportOptions>
DriverOptions SharedDriverOptions(TransportOptions& o) {
  DriverOptions d;
  d.psk = std::move(o.psk);
  d.max_payload_bytes = o.max_payload_bytes;
  d.max_peer_qps = o.max_peer_qps;
  return d;
}

class ProtocolDriver {
 public:
  explicit ProtocolDriver(DriverOptions options);

  // A new session over `port`: checks `local` (kInvalidArgument if it cannot
  // be encoded or exceeds the cap), draws a nonce, port.Open(), then the
  // hellos and the descriptions. Errors as Exchanger::Exchange().
  Result<EndpointInfo> Exchange(FramePort& port, const EndpointInfo& local,
                                Clock::time_point deadline);

  // Exchanger::Prepare(): a new session up to the point where the peer has
  // proved itself (the first half of Exchange(), strays rejected as there),
  // so that the next Exchange() on `port` starts with the descriptions.
  Result<void> Prepare(FramePort& port, Clock::time_point deadline);

  // Errors as Exchanger::Barrier(). A failed barrier ends the session:
  // another Barrier() needs a new Exchange().
  Result<void> Barrier(FramePort& port, std::string_view stage, Clock::time_point deadline);

  // Barrier() whose message carries `note` after the stage (body "stage\n
  // note"); returns the note of the peer's barrier (empty: none). Errors as
  // Barrier(), and kInvalidArgument for a note that is not printable ASCII
  // of at most Exchanger::kMaxBarrierNote bytes.
  Result<std::string> BarrierWithNote(FramePort& port, std::string_view stage,
                                      std::string_view note, Clock::time_point deadline);

  // The stage of the barrier PollPeer() kept (opened, not taken); nullopt
  // when none is kept or it does not open.
  std::optional<std::string> PeerStage();

  // Sends an abort message with `reason` (cut to kMaxAbortReasonBytes), best
  // effort, once per session; no stop (stop.h) cuts it short, its deadline
  // bounds it. Before the peer's hello is known, a stream port (not a
  // mailbox) sends an early abort, bound to this side's nonce only (with a
  // PSK without its reason: no key is agreed yet); nothing before this side's
  // hello went out, or after a send of ours was cut short (the peer would
  // read the abort as the rest of that frame).
  void Abort(FramePort& port, std::string_view reason, Clock::time_point deadline);

  // Thread-safe, from any thread, at any time; final. The pending call (or
  // the next: Exchange(), Barrier(), PollPeer()) ends within about
  // kInterruptPoll with AsStopped()'s error (kIo, ECANCELED, "cancelled:
  // <reason>") and, where a session is under way, sends the peer an abort
  // with `reason` first.
  void Cancel(std::string_view reason) { stop_.Request(reason); }

  // Without waiting, after a successful Exchange() (during traffic): an error
  // if the peer is known to be gone (the channel closed or broke, its process
  // died) or aborted, or if this side was cancelled (the peer then told);
  // Ok otherwise. A frame the peer sent meanwhile (its next barrier) is kept
  // for the next Barrier(). Once it has failed it keeps failing with the
  // same error.
  Result<void> PollPeer(FramePort& port);

  // Ends the session (the transport's connection closed): Barrier() then
  // needs a new Exchange().
  void Forget() {
    exchanged_ = false;
    greeted_ = false;
  }

  const Handshake& handshake() const { return handshake_; }

  // Frames and bytes through every port given to this driver (Exchanger::
  // stats()).
  const ExchangeStats& stats() const { return stats_; }

 private:
  bool exchanges_hellos() const { return hello_without_psk_ || handshake_.has_psk(); }
  Result<EndpointInfo> RunExchange(FramePort& port, const EndpointInfo& local,
                                   Clock::time_point deadline);
  // `note`: sent after the stage; `peer_note`: set to the peer's (both or
  // neither given).
  Result<void> RunBarrier(FramePort& port, std::string_view stage, Clock::time_point deadline,
                          std::optional<std::string_view> note = std::nullopt,
                          std::string* peer_note = nullptr);
  // The end of a public call: a wait a stop ended is reported as the stop
  // (AsStopped()), and after a Cancel() the peer is sent its reason.
  template <typename T>
  Result<T> Finish(FramePort& port, Result<T> result);
  // Without waiting, after the peer's barrier was accepted: an abort the
  // peer sent right after it (it gave up while this side was not yet in the
  // barrier) fails the barrier now rather than the next call. Not after the
  // descriptions: each side validates them and reports its own findings. Another frame is kept for
  // the next Receive(); a broken channel is left for the next call to find.
  Result<void> AbortQueued(FramePort& port, const Step& step);
  // The peer's early abort (bound to its nonce only, docs/oob.md): its
  // error; nullopt when `frame` is not one from this session's peer.
  std::optional<Error> EarlyAbortOf(const Frame& frame) const;
  // A new session up to the point where the peer has proved itself: nonce,
  // port.Open(), hellos, and with a PSK the key confirmation. `connected` is
  // set once port.Open() succeeded (a peer is there to reject).
  Result<void> Greet(FramePort& port, Clock::time_point deadline, Clock::duration total,
                     bool* connected);
  // Greet(), again for each stray a port that AcceptsAnotherPeer() rejects.
  Result<void> GreetPeer(FramePort& port, Clock::time_point deadline, Clock::duration total);
  // port.Send(). When the channel broke (not a timeout), what the peer sent
  // before it went away (an abort, a cut-off frame) explains more than the
  // broken pipe: that is returned if it arrives within a short grace.
  Result<void> Send(FramePort& port, const Step& step, std::string_view bytes);
  // port.Receive(), with a peer's abort turned into its error.
  Result<Frame> Receive(FramePort& port, const Step& step);
  Result<void> Settle(FramePort& port, const Step& step);
  // The error an abort frame from the peer stands for.
  Error PeerAborted(const Frame& frame, FrameType expected);
  // With a mailbox port, a deadline that passes while the peer's hello showed
  // a PSK mismatch is reported as that mismatch (kAuth).
  Error WithPskNote(Error e) const;

  // The port's Send(), counted in stats_ when it succeeds.
  Result<void> PortSend(FramePort& port, const Step& step, std::string_view bytes);
  // Counts a frame the port handed over.
  void CountReceived(const Frame& frame);

  Handshake handshake_;
  ExchangeStats stats_;
  uint32_t max_payload_bytes_;
  uint32_t max_peer_qps_;
  std::chrono::milliseconds peer_handshake_timeout_;
  uint32_t max_rejected_peers_;
  SendOrder order_;
  bool hello_without_psk_;
  bool mailbox_;
  bool exchanged_ = false;
  // Prepare() greeted the peer: the next Exchange() skips GreetPeer().
  bool greeted_ = false;
  // The peer's nonce has been confirmed by a bound message (streams: its
  // hello; mailboxes: its description).
  bool peer_confirmed_ = false;
  std::string psk_note_;
  uint32_t send_seq_ = 0;
  uint32_t recv_seq_ = 0;
  // A frame PollPeer() found, for the next Receive(); and PollPeer()'s
  // verdict once the peer is gone.
  std::optional<Frame> pending_;
  std::optional<Error> gone_;
  // This session: our hello went out; an abort went out (one per session); a
  // send was cut short by a stop (the channel may hold part of a frame).
  bool hello_sent_ = false;
  bool aborted_ = false;
  bool send_cut_ = false;
  StopToken stop_;
};

// A FramePort over a ByteChannel: frames back to back on a byte stream, as
// tcp and caller-supplied channels carry them. Receive() reads the 12-byte
// header, refuses a length above the step's cap before allocating, then reads
// the body in slices of at most 1 MiB, growing its buffer only as bytes
// arrive. It never asks the channel for bytes past the frame, so the channel
// keeps the peer's next one. Poll() reads what is already there (receive()
// with a deadline that has passed) and keeps a partial frame for later.
class StreamPort : public FramePort {
 public:
  StreamPort(ByteChannel channel, std::string name);

  std::string Name() const override { return name_; }
  Result<void> Send(const Step& step, std::string_view bytes) override;
  Result<Frame> Receive(const Step& step) override;
  Result<std::optional<Frame>> Poll(const Step& step) override;

 protected:
  void set_name(std::string name) { name_ = std::move(name); }
  // Forgets bytes read ahead (a new connection).
  void Reset() { ahead_.clear(); }

 private:
  // Reads until ahead_ holds `want` bytes; `frame_bytes` is the frame's size
  // once its header is known (0 before), for the errors. A receive()
  // deadline of `step.deadline`.
  Result<void> Fill(size_t want, const Step& step, size_t frame_bytes);
  // One receive() of at most `max` bytes into ahead_: the count, 0 at end of
  // stream.
  Result<size_t> ReadSome(size_t max, Clock::time_point deadline);
  // "before sending its hello", "mid-message: got 7 bytes of the 12-byte
  // header of its hello frame", "mid-message: got 20 of 28 bytes of ...".
  std::string Progress(const Step& step, size_t frame_bytes) const;
  // The frame that spans ahead_[0, frame_bytes), removed from ahead_.
  Frame TakeFrame(size_t frame_bytes);

  ByteChannel channel_;
  std::string name_;
  std::string ahead_;  // bytes of the peer's next frame received so far
};

}  // namespace qpconnect::oob::internal
