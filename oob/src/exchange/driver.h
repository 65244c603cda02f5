// The protocol driver: the one place where the out-of-band protocol's
// sequence and checks are written (docs/oob.md). Private to src/exchange.
//
//   Exchange()  [hello <-> hello] -> description <-> description (ordered)
//   Barrier()   barrier <-> barrier, stage check
//   Abort()     abort ->
//
// It moves frames through a FramePort, which each transport implements: a
// byte stream (StreamPort: tcp and caller-supplied ByteChannels), lines of
// text (stdio), or files in a directory (file). The driver checks this side's
// description, seals and opens every message (session.h: binding, sequence
// numbers, PSK), orders the description sends, checks stages and turns the
// peer's abort into an error. A port only moves whole frames and words its
// own waits and failures.
//
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"
#include "session.h"

namespace qpconnect::oob::internal {

using Clock = std::chrono::steady_clock;

// Longest abort reason sent; longer ones are cut.
inline constexpr size_t kMaxAbortReasonBytes = 1024;

// One message of a call, as the driver asks a port to move it.
struct Step {
  FrameType type = FrameType::kHello;
  // The message's sequence number in its direction: 0 for the hello and the
  // description, N for the N-th barrier (docs/oob.md).
  uint32_t seq = 0;
  Clock::time_point deadline;
  Clock::duration total{};  // the whole call's time, for "within N ms"

  // "hello", "description", "barrier", "abort".
  const char* what() const;
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
};

struct DriverOptions {
  std::optional<Psk> psk;  // both sides need the same key, or neither
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
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

class ProtocolDriver {
 public:
  explicit ProtocolDriver(DriverOptions options);

  // A new session over `port`: checks `local` (kInvalidArgument if it cannot
  // be encoded or exceeds the cap), draws a nonce, port.Open(), then the
  // hellos and the descriptions. Errors as Exchanger::Exchange().
  Result<EndpointInfo> Exchange(FramePort& port, const EndpointInfo& local,
                                Clock::time_point deadline);

  // Errors as Exchanger::Barrier(). A failed barrier ends the session:
  // another Barrier() needs a new Exchange().
  Result<void> Barrier(FramePort& port, std::string_view stage, Clock::time_point deadline);

  // Sends an abort message with `reason` (cut to kMaxAbortReasonBytes), best
  // effort; nothing before the peer's nonce is known where messages are bound.
  void Abort(FramePort& port, std::string_view reason, Clock::time_point deadline);

  // Ends the session (the transport's connection closed): Barrier() then
  // needs a new Exchange().
  void Forget() { exchanged_ = false; }

  const Session& session() const { return session_; }

 private:
  bool handshake() const { return hello_without_psk_ || session_.has_psk(); }
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

  Session session_;
  uint32_t max_payload_bytes_;
  SendOrder order_;
  bool hello_without_psk_;
  bool mailbox_;
  bool exchanged_ = false;
  // The peer's nonce has been confirmed by a bound message (streams: its
  // hello; mailboxes: its description).
  bool peer_confirmed_ = false;
  std::string psk_note_;
  uint32_t send_seq_ = 0;
  uint32_t recv_seq_ = 0;
};

// A FramePort over a ByteChannel: frames back to back on a byte stream, as
// tcp and caller-supplied channels carry them. Receive() reads the 12-byte
// header, refuses a length above the cap before allocating, then reads the
// body in slices of at most 1 MiB, growing its buffer only as bytes arrive.
// It never reads past the frame, so the channel keeps the peer's next one.
class StreamPort : public FramePort {
 public:
  StreamPort(ByteChannel channel, std::string name, uint32_t max_payload_bytes);

  std::string Name() const override { return name_; }
  Result<void> Send(const Step& step, std::string_view bytes) override;
  Result<Frame> Receive(const Step& step) override;

 protected:
  void set_name(std::string name) { name_ = std::move(name); }

 private:
  // Fills buf[0, want) from the channel; `before` bytes of the frame came
  // earlier and `frame_bytes` is its size as far as known, for the errors.
  Result<void> ReadExactly(char* buf, size_t want, const Step& step, size_t before,
                           size_t frame_bytes);

  ByteChannel channel_;
  std::string name_;
  uint32_t max_payload_bytes_;
};

}  // namespace qpconnect::oob::internal
