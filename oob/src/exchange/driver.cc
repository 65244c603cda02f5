// SPDX-License-Identifier: MIT
#include "driver.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "qpconnect/exchanger.h"
#include "qpconnect/log.h"

namespace qpconnect::oob::internal {
namespace {

// Body bytes asked of the channel per receive() call: the buffer grows with
// the data that actually arrives, never to the announced length up front.
constexpr size_t kReadSlice = 1u << 20;

// How long a failed send waits for what the peer sent before it went away.
constexpr std::chrono::milliseconds kGraceAfterBrokenSend{100};

// Runs a caller-supplied channel function; an exception it lets escape
// becomes kIo, so none crosses the library API.
template <typename T, typename F>
Result<T> Guarded(const char* function, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return MakeError(
        ErrorCode::kIo, "",
        std::string("the channel's ") + function + "() threw an exception: " + e.what());
  } catch (...) {
    return MakeError(ErrorCode::kIo, "",
                     std::string("the channel's ") + function + "() threw an exception");
  }
}

// Prefixes `operation` to an error's own operation.
Error Within(Error e, const std::string& operation) {
  e.operation = operation + (e.operation.empty() ? std::string() : ": " + e.operation);
  return e;
}

}  // namespace

uint64_t DescriptionBound(uint64_t qps) {
  return kDescriptionBaseBytes + qps * kDescriptionBytesPerQp + kBindingBytes;
}

const char* Step::what() const {
  return type == FrameType::kEndpoint ? "description" : FrameTypeName(type);
}

Error Step::WithCapNote(Error e) const {
  if (e.attribute == "length" && !cap_note.empty()) e.detail += " (" + cap_note + ")";
  return e;
}

Result<void> FramePort::Open(const Step& step) {
  (void)step;
  return Ok();
}

Result<std::optional<Frame>> FramePort::Settle(const Step& step) {
  (void)step;
  return std::optional<Frame>();
}

Result<std::optional<Frame>> FramePort::Poll(const Step& step) {
  (void)step;
  return std::optional<Frame>();
}

ProtocolDriver::ProtocolDriver(DriverOptions options)
    : handshake_(std::move(options.psk), options.role),
      max_payload_bytes_(options.max_payload_bytes),
      max_peer_qps_(options.max_peer_qps),
      peer_handshake_timeout_(options.peer_handshake_timeout),
      max_rejected_peers_(std::max<uint32_t>(1, options.max_rejected_peers)),
      order_(options.order),
      hello_without_psk_(options.hello_without_psk),
      mailbox_(options.mailbox) {}

Error ProtocolDriver::PeerAborted(const Frame& frame, FrameType expected) {
  if (auto early = handshake_.OpenEarlyAbort(frame)) return std::move(*early);
  // Open() checks the abort's binding and MAC or AEAD tag, then, since
  // `expected` is not kAbort, refuses it as kProtocol "the peer aborted: ...".
  const bool learn = exchanges_hellos() && !peer_confirmed_;
  auto opened = handshake_.Open(frame, expected, recv_seq_, learn);
  return opened ? MakeError(ErrorCode::kProtocol, "receive", "the peer aborted")
                : std::move(opened).error();
}

Result<Frame> ProtocolDriver::Receive(FramePort& port, const Step& step) {
  std::optional<Frame> frame;
  if (pending_) {
    frame = std::move(pending_);
    pending_.reset();
  } else {
    auto got = port.Receive(step);
    if (!got) return WithPskNote(std::move(got).error());
    CountReceived(*got);
    frame = std::move(*got);
  }
  if (frame->type == FrameType::kAbort) return PeerAborted(*frame, step.type);
  return std::move(*frame);
}

Result<void> ProtocolDriver::Send(FramePort& port, const Step& step, std::string_view bytes) {
  auto sent = PortSend(port, step, bytes);
  if (sent || sent.error().code == ErrorCode::kTimeout) return sent;
  Step look = step;
  look.deadline = std::min(step.deadline, Clock::now() + kGraceAfterBrokenSend);
  look.max_payload = kSmallFramePayloadBytes;
  auto frame = port.Receive(look);
  if (frame) {
    CountReceived(*frame);
    return frame->type == FrameType::kAbort ? Result<void>(PeerAborted(*frame, step.type)) : sent;
  }
  return frame.error().code == ErrorCode::kTimeout ? sent : std::move(frame).error();
}

Result<void> ProtocolDriver::PortSend(FramePort& port, const Step& step, std::string_view bytes) {
  auto sent = port.Send(step, bytes);
  if (sent) {
    ++stats_.frames_sent;
    stats_.bytes_sent += bytes.size();
  } else {
    send_cut_ = true;  // how much went is unknown: no frame may follow it
  }
  return sent;
}

Result<void> ProtocolDriver::AbortQueued(FramePort& port, const Step& step) {
  if (pending_) return Ok();
  auto polled = port.Poll(step);
  if (!polled || !*polled) return Ok();
  CountReceived(**polled);
  if ((*polled)->type == FrameType::kAbort) return PeerAborted(**polled, step.type);
  pending_ = std::move(**polled);
  return Ok();
}

template <typename T>
Result<T> ProtocolDriver::Finish(FramePort& port, Result<T> result) {
  if (result || !StopRequested()) return result;
  Error e = std::move(result).error();
  if (e.code == ErrorCode::kTimeout) e = AsStopped(std::move(e));
  if (stop_.requested()) Abort(port, stop_.reason(), Clock::now() + kAbortAfterCancel);
  return e;
}

void ProtocolDriver::CountReceived(const Frame& frame) {
  ++stats_.frames_received;
  stats_.bytes_received += kFrameHeaderBytes + frame.payload.size() + frame.mac.size();
}

Result<void> ProtocolDriver::Settle(FramePort& port, const Step& step) {
  auto settled = port.Settle(step);
  if (!settled) return std::move(settled).error();
  if (*settled) {
    CountReceived(**settled);
    return PeerAborted(**settled, step.type);
  }
  return Ok();
}

Error ProtocolDriver::WithPskNote(Error e) const {
  if (e.code == ErrorCode::kTimeout && !psk_note_.empty() && !peer_confirmed_) {
    e.code = ErrorCode::kAuth;
    e.detail = psk_note_ + "; " + e.detail;
  }
  return e;
}

Result<void> ProtocolDriver::Greet(FramePort& port, Clock::time_point deadline,
                                   Clock::duration total, bool* connected) {
  *connected = false;
  QPC_TRY(handshake_.Begin());
  send_seq_ = 0;
  recv_seq_ = 0;
  peer_confirmed_ = false;
  psk_note_.clear();
  pending_.reset();
  gone_.reset();
  hello_sent_ = false;
  aborted_ = false;
  send_cut_ = false;

  Step step{FrameType::kHello, 0, deadline, total, kSmallFramePayloadBytes, {}};
  QPC_TRY(port.Open(step));
  *connected = true;
  handshake_.set_channel(port.Name());
  if (port.AcceptsAnotherPeer()) {
    // A peer that may be a stray has a short time to prove itself, so that
    // it cannot hold the rendezvous (docs/oob.md, "What one bad peer costs").
    const auto now = Clock::now();
    step.deadline = std::min(deadline, now + peer_handshake_timeout_);
    step.total = step.deadline - now;
  }
  if (!exchanges_hellos()) return Ok();
  // Hellos are small: both sides send before reading.
  QPC_TRY(Send(port, step, handshake_.EncodeHello()));
  hello_sent_ = true;
  auto hello = Receive(port, step);
  if (!hello) return std::move(hello).error();
  QPC_TRY(handshake_.AcceptHello(*hello, mailbox_ ? &psk_note_ : nullptr));
  if (!handshake_.has_psk()) {
    peer_confirmed_ = !mailbox_;
    return Ok();
  }
  // Key confirmation: each side proves it holds the PSK, and sends nothing
  // derived from its description until the peer's proof verified.
  step.type = FrameType::kConfirm;
  auto confirm = handshake_.SealConfirm();
  if (!confirm) return std::move(confirm).error();
  const std::optional<Nonce> bound_to = handshake_.peer_nonce();
  QPC_TRY(Send(port, step, *confirm));
  auto frame = Receive(port, step);
  if (!frame) return std::move(frame).error();
  auto opened = handshake_.Open(*frame, FrameType::kConfirm, 0, /*learn=*/mailbox_);
  if (!opened) return std::move(opened).error();
  peer_confirmed_ = true;
  if (mailbox_ && handshake_.peer_nonce() != bound_to) {
    // Ours was bound to a stale hello: bind it to the nonce the peer's
    // confirm carries and send it again (it replaces the first).
    auto rebound = handshake_.SealConfirm();
    if (!rebound) return std::move(rebound).error();
    QPC_TRY(PortSend(port, step, *rebound));
  }
  return Ok();
}

Result<void> ProtocolDriver::Prepare(FramePort& port, Clock::time_point deadline) {
  WaitScope scope(&stop_);
  greeted_ = false;
  exchanged_ = false;
  if (StopRequested()) {
    // Before anything was connected or sent: no peer of this call to tell.
    return AsStopped(MakeError(ErrorCode::kTimeout, "greet over " + port.Name(), ""));
  }
  QPC_TRY(Finish(port, GreetPeer(port, deadline, deadline - Clock::now())));
  greeted_ = true;
  return Ok();
}

Result<void> ProtocolDriver::GreetPeer(FramePort& port, Clock::time_point deadline,
                                       Clock::duration total) {
  // A peer that fails before it proved itself is rejected, where the port
  // can take another (a tcp server), and the next one is served.
  uint32_t rejected = 0;
  std::optional<Error> last_rejection;
  for (;;) {
    bool connected = false;
    auto shaken = Greet(port, deadline, total, &connected);
    if (shaken) break;
    Error e = std::move(shaken).error();
    const bool stray = connected && port.AcceptsAnotherPeer() && Clock::now() < deadline &&
                       e.code != ErrorCode::kInvalidArgument && !StopRequested();
    if (!stray) {
      if (!last_rejection || StopRequested()) return e;
      // Nobody else came: the last rejection explains more than the wait.
      Error r = *last_rejection;
      r.detail += "; then " +
                  (e.code == ErrorCode::kTimeout ? std::string("no other peer")
                                                 : "another failure: " + e.ToString()) +
                  " (" + std::to_string(rejected) + " peer" + (rejected == 1 ? "" : "s") +
                  " rejected within " + MsText(total) + ")";
      return r;
    }
    ++rejected;
    Log(LogLevel::kWarning, "rejected " + port.Name() + " before it proved itself (" +
                                e.ToString() + "); still waiting for the peer");
    last_rejection = std::move(e);
    if (rejected >= max_rejected_peers_) {
      Error r = *last_rejection;
      r.detail += "; gave up after rejecting " + std::to_string(rejected) + " peers";
      return r;
    }
  }
  return Ok();
}

Result<EndpointInfo> ProtocolDriver::Exchange(FramePort& port, const EndpointInfo& local,
                                              Clock::time_point deadline) {
  WaitScope scope(&stop_);
  if (StopRequested()) {
    // Before anything was connected or sent: no peer of this call to tell.
    exchanged_ = false;
    return AsStopped(MakeError(ErrorCode::kTimeout, "exchange over " + port.Name(), ""));
  }
  return Finish(port, RunExchange(port, local, deadline));
}

Result<EndpointInfo> ProtocolDriver::RunExchange(FramePort& port, const EndpointInfo& local,
                                                 Clock::time_point deadline) {
  const Clock::duration total = deadline - Clock::now();
  exchanged_ = false;
  auto body = EncodeLocal(local);
  if (!body) return std::move(body).error();
  if (body->size() + kBindingBytes > max_payload_bytes_) {
    return MakeError(ErrorCode::kInvalidArgument, "encode local description",
                     "the description takes " + std::to_string(body->size()) +
                         " bytes, above the frame cap of " + std::to_string(max_payload_bytes_));
  }

  // Prepare() did the first half, unless the session ended since.
  if (!std::exchange(greeted_, false)) QPC_TRY(GreetPeer(port, deadline, total));

  const uint64_t peer_qps = max_peer_qps_ != 0 ? max_peer_qps_ : local.qps.size();
  Step step{FrameType::kEndpoint, 0, deadline, total, kSmallFramePayloadBytes, {}};
  step.max_payload =
      static_cast<uint32_t>(std::min<uint64_t>(max_payload_bytes_, DescriptionBound(peer_qps)));
  if (step.max_payload < max_payload_bytes_) {
    step.cap_note = "a description of at most " + std::to_string(peer_qps) + " QP" +
                    (peer_qps == 1 ? "" : "s") +
                    (max_peer_qps_ != 0 ? " (max_peer_qps)" : ", this side's count,") +
                    " takes at most " + std::to_string(step.max_payload) +
                    " bytes: does the peer use more QPs?";
  }
  auto sealed = handshake_.Seal(FrameType::kEndpoint, *body, send_seq_);
  if (!sealed) return std::move(sealed).error();
  const std::optional<Nonce> bound_to = handshake_.peer_nonce();
  // Descriptions may far exceed what a channel buffers: unless both sides
  // may send at once, the lower nonce sends first and the other reads first.
  const bool send_first =
      !exchanges_hellos() || order_ == SendOrder::kBothFirst || handshake_.SortsBelowPeer();
  if (send_first) QPC_TRY(Send(port, step, *sealed));
  auto frame = Receive(port, step);
  if (!frame) return std::move(frame).error();
  // The reader-first side answers even a description it will refuse, so
  // that the peer fails with its own error rather than at its deadline.
  Result<void> answered = send_first ? Ok() : PortSend(port, step, *sealed);
  const bool learn = mailbox_ && !handshake_.has_psk();
  auto opened = handshake_.Open(*frame, FrameType::kEndpoint, recv_seq_, learn);
  if (!opened) return std::move(opened).error();
  auto info = DecodePeer(*opened, port.Name());
  if (!info) return info;
  if (info->qps.size() > peer_qps) {
    return MakeError(ErrorCode::kIncompatible, "exchange with " + port.Name(),
                     "the peer describes " + std::to_string(info->qps.size()) +
                         " QPs, more than the " + std::to_string(peer_qps) +
                         (max_peer_qps_ != 0 ? " allowed (max_peer_qps)" : " of this side"),
                     "qps");
  }
  if (!answered) return std::move(answered).error();
  peer_confirmed_ = true;
  if (learn && handshake_.peer_nonce() != bound_to) {
    // Ours was bound to a stale hello: bind it to the nonce the peer's
    // description carries and send it again (it replaces the first).
    auto rebound = handshake_.Seal(FrameType::kEndpoint, *body, send_seq_);
    if (!rebound) return std::move(rebound).error();
    QPC_TRY(PortSend(port, step, *rebound));
  }
  QPC_TRY(Settle(port, step));
  send_seq_ = 1;
  recv_seq_ = 1;
  // No look for a queued abort here: each side validates the descriptions
  // and reports its own findings; a peer's abort is met at the barrier.
  exchanged_ = true;
  return info;
}

Result<void> ProtocolDriver::Barrier(FramePort& port, std::string_view stage,
                                     Clock::time_point deadline) {
  WaitScope scope(&stop_);
  if (StopRequested()) {
    Error stopped = MakeError(ErrorCode::kTimeout, "barrier '" + std::string(stage) + "'", "");
    // A session still alive is told (Finish()); after one that ended, only
    // the stop is reported.
    if (exchanged_) return Finish(port, Result<void>(std::move(stopped)));
    return AsStopped(std::move(stopped));
  }
  return Finish(port, RunBarrier(port, stage, deadline));
}

Result<std::string> ProtocolDriver::BarrierWithNote(FramePort& port, std::string_view stage,
                                                    std::string_view note,
                                                    Clock::time_point deadline) {
  if (note.size() > Exchanger::kMaxBarrierNote || std::any_of(note.begin(), note.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u > 0x7e;
      })) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "a barrier's note must be printable ASCII of at most " +
                         std::to_string(Exchanger::kMaxBarrierNote) + " bytes");
  }
  WaitScope scope(&stop_);
  if (StopRequested()) {
    Error stopped = MakeError(ErrorCode::kTimeout, "barrier '" + std::string(stage) + "'", "");
    if (exchanged_) return Finish(port, Result<std::string>(std::move(stopped)));
    return AsStopped(std::move(stopped));
  }
  std::string peer_note;
  QPC_TRY(Finish(port, RunBarrier(port, stage, deadline, note, &peer_note)));
  return peer_note;
}

std::optional<std::string> ProtocolDriver::PeerStage() {
  if (!pending_ || pending_->type != FrameType::kBarrier) return std::nullopt;
  auto opened = handshake_.Open(*pending_, FrameType::kBarrier, recv_seq_);
  if (!opened) return std::nullopt;
  return opened->substr(0, opened->find('\n'));
}

Result<void> ProtocolDriver::RunBarrier(FramePort& port, std::string_view stage,
                                        Clock::time_point deadline,
                                        std::optional<std::string_view> note,
                                        std::string* peer_note) {
  const Clock::duration total = deadline - Clock::now();
  QPC_TRY(CheckStage(stage));
  if (!exchanged_) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "Barrier() needs a successful Exchange() first");
  }
  exchanged_ = false;  // until this barrier passes
  // Barrier messages are small: both sides send before reading.
  const Step send{FrameType::kBarrier, send_seq_, deadline, total};
  std::string body(stage);
  if (note) body += "\n" + std::string(*note);
  auto sealed = handshake_.Seal(FrameType::kBarrier, body, send_seq_++);
  if (!sealed) return std::move(sealed).error();
  QPC_TRY(Send(port, send, *sealed));
  const Step receive{FrameType::kBarrier, recv_seq_, deadline, total};
  auto frame = Receive(port, receive);
  if (!frame) return std::move(frame).error();
  auto opened = handshake_.Open(*frame, FrameType::kBarrier, recv_seq_++);
  if (!opened) return std::move(opened).error();
  if (peer_note != nullptr) {
    const size_t cut = opened->find('\n');
    if (cut != std::string::npos) {
      *peer_note = opened->substr(cut + 1);
      opened->resize(cut);
    }
  }
  QPC_TRY(MatchStage(*opened, stage, port.Name()));
  QPC_TRY(Settle(port, receive));
  const Step next{FrameType::kBarrier,     recv_seq_, Clock::now(), Clock::duration::zero(),
                  kSmallFramePayloadBytes, {}};
  QPC_TRY(AbortQueued(port, next));
  exchanged_ = true;
  return Ok();
}

void ProtocolDriver::Abort(FramePort& port, std::string_view reason, Clock::time_point deadline) {
  exchanged_ = false;
  // Once per session, and never after part of a frame: the peer would read
  // the abort as the rest of it.
  if (aborted_ || send_cut_) return;
  WaitScope exempt(nullptr, /*exempt=*/true);  // bounded by its own deadline
  const Step step{FrameType::kAbort,       send_seq_, deadline, deadline - Clock::now(),
                  kSmallFramePayloadBytes, {}};
  reason = reason.substr(0, kMaxAbortReasonBytes);
  if (exchanges_hellos() && !handshake_.peer_nonce()) {
    // Only our nonce is known to the peer: an early abort, on a stream that
    // has carried our hello (a mailbox may hold an earlier run's hello).
    if (mailbox_ || !hello_sent_) return;
    aborted_ = true;
    (void)PortSend(port, step, handshake_.EncodeEarlyAbort(reason));
    return;
  }
  auto sealed = handshake_.Seal(FrameType::kAbort, reason, send_seq_++);
  if (!sealed) return;
  aborted_ = true;
  (void)PortSend(port, step, *sealed);
}

Result<void> ProtocolDriver::PollPeer(FramePort& port) {
  if (gone_) return *gone_;
  if (stop_.requested()) {
    // Cancelled during traffic: the peer is told, and this keeps failing.
    WaitScope scope(&stop_);
    auto stopped =
        Finish(port, Result<void>(MakeError(ErrorCode::kTimeout, "poll " + port.Name(), "")));
    gone_ = std::move(stopped).error();
    return *gone_;
  }
  if (!exchanged_ || pending_) return Ok();
  Step step{FrameType::kBarrier,     recv_seq_, Clock::now(), Clock::duration::zero(),
            kSmallFramePayloadBytes, {}};
  auto polled = port.Poll(step);
  if (!polled) {
    gone_ = std::move(polled).error();
    return *gone_;
  }
  if (!*polled) return Ok();
  CountReceived(**polled);
  if ((*polled)->type == FrameType::kAbort) {
    gone_ = PeerAborted(**polled, FrameType::kBarrier);
    return *gone_;
  }
  pending_ = std::move(**polled);  // the peer's next barrier: Barrier() takes it
  return Ok();
}

StreamPort::StreamPort(ByteChannel channel, std::string name)
    : channel_(std::move(channel)), name_(std::move(name)) {}

Result<void> StreamPort::Send(const Step& step, std::string_view bytes) {
  const std::string message =
      "our " + std::to_string(bytes.size()) + "-byte " + step.what() + " message";
  Result<void> sent =
      Clock::now() >= step.deadline
          ? MakeError(ErrorCode::kTimeout, "", "")
          : Guarded<void>("send", [&] { return channel_.send(bytes, step.deadline); });
  if (sent) return sent;
  Error e = std::move(sent).error();
  if (e.code == ErrorCode::kTimeout) {
    e.detail = "the peer did not take " + message + " within " + MsText(step.total) +
               (e.detail.empty() ? std::string() : " (" + e.detail + ")");
  } else {
    e.detail += (e.detail.empty() ? "" : " ") + std::string("(sending ") + message + ")";
  }
  return Within(std::move(e), "send to " + name_);
}

std::string StreamPort::Progress(const Step& step, size_t frame_bytes) const {
  const size_t have = ahead_.size();
  if (have == 0) return std::string("before sending its ") + step.what();
  if (frame_bytes == 0) {
    return "mid-message: got " + std::to_string(have) + " bytes of the " +
           std::to_string(kFrameHeaderBytes) + "-byte header of its " + step.what() + " frame";
  }
  return "mid-message: got " + std::to_string(have) + " of " + std::to_string(frame_bytes) +
         " bytes of its " + step.what() + " frame";
}

Result<size_t> StreamPort::ReadSome(size_t max, Clock::time_point deadline) {
  const size_t have = ahead_.size();
  ahead_.resize(have + max);
  Result<size_t> n = Guarded<size_t>(
      "receive", [&] { return channel_.receive(ahead_.data() + have, max, deadline); });
  if (!n) {
    ahead_.resize(have);
    return n;
  }
  if (*n > max) {
    ahead_.resize(have);
    return MakeError(ErrorCode::kIo, "",
                     "the channel's receive() returned " + std::to_string(*n) +
                         " bytes, more than the " + std::to_string(max) + " asked for");
  }
  ahead_.resize(have + *n);
  return n;
}

Result<void> StreamPort::Fill(size_t want, const Step& step, size_t frame_bytes) {
  while (ahead_.size() < want) {
    const size_t max = std::min(kReadSlice, want - ahead_.size());
    Result<size_t> n = Clock::now() >= step.deadline ? MakeError(ErrorCode::kTimeout, "", "")
                                                     : ReadSome(max, step.deadline);
    if (!n) {
      Error e = std::move(n).error();
      if (e.code == ErrorCode::kTimeout) {
        const size_t have = ahead_.size();
        std::string got;
        if (have == 0) {
          got = std::string("the peer sent nothing within ") + MsText(step.total) +
                " (waiting for its " + step.what() + ")";
        } else if (frame_bytes == 0) {
          got = "the peer sent only " + std::to_string(have) + " bytes of the " +
                std::to_string(kFrameHeaderBytes) + "-byte header of its " + step.what() +
                " frame within " + MsText(step.total);
        } else {
          got = "the peer sent only " + std::to_string(have) + " of the " +
                std::to_string(frame_bytes) + " bytes of its " + step.what() + " frame within " +
                MsText(step.total);
        }
        e.detail = got + (e.detail.empty() ? std::string() : " (" + e.detail + ")");
      } else {
        e.detail += (e.detail.empty() ? "" : " ") + ("(" + Progress(step, frame_bytes) + ")");
      }
      return Within(std::move(e), "receive from " + name_);
    }
    if (*n == 0) {
      return MakeError(ErrorCode::kIo, "receive from " + name_,
                       "the peer closed the connection " + Progress(step, frame_bytes));
    }
  }
  return Ok();
}

Frame StreamPort::TakeFrame(size_t frame_bytes) {
  const size_t payload_bytes = (static_cast<size_t>(static_cast<uint8_t>(ahead_[8])) << 24) |
                               (static_cast<size_t>(static_cast<uint8_t>(ahead_[9])) << 16) |
                               (static_cast<size_t>(static_cast<uint8_t>(ahead_[10])) << 8) |
                               static_cast<size_t>(static_cast<uint8_t>(ahead_[11]));
  Frame f;
  f.type = static_cast<FrameType>(ahead_[5]);
  f.flags = static_cast<uint8_t>(ahead_[6]);
  f.mac = ahead_.substr(kFrameHeaderBytes + payload_bytes,
                        frame_bytes - kFrameHeaderBytes - payload_bytes);
  if (ahead_.size() == frame_bytes) {
    ahead_.resize(kFrameHeaderBytes + payload_bytes);
    ahead_.erase(0, kFrameHeaderBytes);
    f.payload = std::move(ahead_);
    ahead_.clear();
  } else {
    f.payload = ahead_.substr(kFrameHeaderBytes, payload_bytes);
    ahead_.erase(0, frame_bytes);
  }
  return f;
}

Result<Frame> StreamPort::Receive(const Step& step) {
  QPC_TRY(Fill(kFrameHeaderBytes, step, 0));
  auto size = PeekFrameSize(ahead_, step.max_payload);
  if (!size) return Within(step.WithCapNote(std::move(size).error()), "receive from " + name_);
  QPC_TRY(Fill(*size, step, *size));
  return TakeFrame(*size);
}

Result<std::optional<Frame>> StreamPort::Poll(const Step& step) {
  for (;;) {
    size_t frame_bytes = 0;
    if (ahead_.size() >= kFrameHeaderBytes) {
      auto size = PeekFrameSize(ahead_, step.max_payload);
      if (!size) return Within(std::move(size).error(), "receive from " + name_);
      frame_bytes = *size;
      if (ahead_.size() >= frame_bytes) return std::optional<Frame>(TakeFrame(frame_bytes));
    }
    const size_t want = frame_bytes != 0 ? frame_bytes : kFrameHeaderBytes;
    // A deadline that has passed: only what is already there.
    auto n = ReadSome(std::min(kReadSlice, want - ahead_.size()), Clock::now());
    if (!n) {
      if (n.error().code == ErrorCode::kTimeout) return std::optional<Frame>();
      Error e = std::move(n).error();
      e.detail += (e.detail.empty() ? "" : " ") + ("(" + Progress(step, frame_bytes) + ")");
      return Within(std::move(e), "receive from " + name_);
    }
    if (*n == 0) {
      return MakeError(ErrorCode::kIo, "receive from " + name_,
                       "the peer closed the connection" +
                           (ahead_.empty() ? std::string() : " " + Progress(step, frame_bytes)));
    }
  }
}

}  // namespace qpconnect::oob::internal
