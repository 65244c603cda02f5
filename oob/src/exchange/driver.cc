#include "driver.h"

#include <algorithm>
#include <exception>
#include <utility>

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

const char* Step::what() const {
  return type == FrameType::kEndpoint ? "description" : FrameTypeName(type);
}

Result<void> FramePort::Open(const Step& step) {
  (void)step;
  return Ok();
}

Result<std::optional<Frame>> FramePort::Settle(const Step& step) {
  (void)step;
  return std::optional<Frame>();
}

ProtocolDriver::ProtocolDriver(DriverOptions options)
    : session_(std::move(options.psk)),
      max_payload_bytes_(options.max_payload_bytes),
      order_(options.order),
      hello_without_psk_(options.hello_without_psk),
      mailbox_(options.mailbox) {}

Error ProtocolDriver::PeerAborted(const Frame& frame, FrameType expected) {
  // Open() checks the abort's binding and MAC, then, since `expected` is not
  // kAbort, refuses it as kProtocol "the peer aborted: <reason>".
  const bool learn = handshake() && !peer_confirmed_;
  auto opened = session_.Open(frame, expected, recv_seq_, learn);
  return opened ? MakeError(ErrorCode::kProtocol, "receive", "the peer aborted")
                : std::move(opened).error();
}

Result<Frame> ProtocolDriver::Receive(FramePort& port, const Step& step) {
  auto frame = port.Receive(step);
  if (!frame) return WithPskNote(std::move(frame).error());
  if (frame->type == FrameType::kAbort) return PeerAborted(*frame, step.type);
  return frame;
}

Result<void> ProtocolDriver::Send(FramePort& port, const Step& step, std::string_view bytes) {
  auto sent = port.Send(step, bytes);
  if (sent || sent.error().code == ErrorCode::kTimeout) return sent;
  Step look = step;
  look.deadline = std::min(step.deadline, Clock::now() + kGraceAfterBrokenSend);
  auto frame = port.Receive(look);
  if (frame) {
    return frame->type == FrameType::kAbort ? Result<void>(PeerAborted(*frame, step.type)) : sent;
  }
  return frame.error().code == ErrorCode::kTimeout ? sent : std::move(frame).error();
}

Result<void> ProtocolDriver::Settle(FramePort& port, const Step& step) {
  auto settled = port.Settle(step);
  if (!settled) return std::move(settled).error();
  if (*settled) return PeerAborted(**settled, step.type);
  return Ok();
}

Error ProtocolDriver::WithPskNote(Error e) const {
  if (e.code == ErrorCode::kTimeout && !psk_note_.empty() && !peer_confirmed_) {
    e.code = ErrorCode::kAuth;
    e.detail = psk_note_ + "; " + e.detail;
  }
  return e;
}

Result<EndpointInfo> ProtocolDriver::Exchange(FramePort& port, const EndpointInfo& local,
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
  QPC_TRY(session_.Begin());
  send_seq_ = 0;
  recv_seq_ = 0;
  peer_confirmed_ = false;
  psk_note_.clear();

  Step step{FrameType::kHello, 0, deadline, total};
  QPC_TRY(port.Open(step));
  session_.set_channel(port.Name());
  if (handshake()) {
    // Hellos are small: both sides send before reading.
    QPC_TRY(Send(port, step, session_.EncodeHello()));
    auto hello = Receive(port, step);
    if (!hello) return std::move(hello).error();
    QPC_TRY(session_.AcceptHello(*hello, mailbox_ ? &psk_note_ : nullptr));
    peer_confirmed_ = !mailbox_;
  }

  step.type = FrameType::kEndpoint;
  auto sealed = session_.Seal(FrameType::kEndpoint, *body, send_seq_);
  if (!sealed) return std::move(sealed).error();
  const std::optional<Nonce> bound_to = session_.peer_nonce();
  // Descriptions may far exceed what a channel buffers: unless both sides
  // may send at once, the lower nonce sends first and the other reads first.
  const bool send_first =
      !handshake() || order_ == SendOrder::kBothFirst || session_.SortsBelowPeer();
  if (send_first) QPC_TRY(Send(port, step, *sealed));
  auto frame = Receive(port, step);
  if (!frame) return std::move(frame).error();
  // The reader-first side answers even a description it will refuse, so
  // that the peer fails with its own error rather than at its deadline.
  Result<void> answered = send_first ? Ok() : port.Send(step, *sealed);
  auto opened = session_.Open(*frame, FrameType::kEndpoint, recv_seq_, /*learn=*/mailbox_);
  if (!opened) return std::move(opened).error();
  auto info = DecodePeer(*opened, port.Name());
  if (!info) return info;
  if (!answered) return std::move(answered).error();
  peer_confirmed_ = true;
  if (mailbox_ && session_.peer_nonce() != bound_to) {
    // Ours was bound to a stale hello: bind it to the nonce the peer's
    // description carries and send it again (it replaces the first).
    auto rebound = session_.Seal(FrameType::kEndpoint, *body, send_seq_);
    if (!rebound) return std::move(rebound).error();
    QPC_TRY(port.Send(step, *rebound));
  }
  QPC_TRY(Settle(port, step));
  send_seq_ = 1;
  recv_seq_ = 1;
  exchanged_ = true;
  return info;
}

Result<void> ProtocolDriver::Barrier(FramePort& port, std::string_view stage,
                                     Clock::time_point deadline) {
  const Clock::duration total = deadline - Clock::now();
  QPC_TRY(CheckStage(stage));
  if (!exchanged_) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "Barrier() needs a successful Exchange() first");
  }
  exchanged_ = false;  // until this barrier passes
  // Barrier messages are small: both sides send before reading.
  const Step send{FrameType::kBarrier, send_seq_, deadline, total};
  auto sealed = session_.Seal(FrameType::kBarrier, stage, send_seq_++);
  if (!sealed) return std::move(sealed).error();
  QPC_TRY(Send(port, send, *sealed));
  const Step receive{FrameType::kBarrier, recv_seq_, deadline, total};
  auto frame = Receive(port, receive);
  if (!frame) return std::move(frame).error();
  auto opened = session_.Open(*frame, FrameType::kBarrier, recv_seq_++);
  if (!opened) return std::move(opened).error();
  QPC_TRY(MatchStage(*opened, stage, port.Name()));
  QPC_TRY(Settle(port, receive));
  exchanged_ = true;
  return Ok();
}

void ProtocolDriver::Abort(FramePort& port, std::string_view reason, Clock::time_point deadline) {
  exchanged_ = false;
  if (handshake() && !session_.peer_nonce()) return;  // nothing the peer could verify
  const Step step{FrameType::kAbort, send_seq_, deadline, deadline - Clock::now()};
  auto sealed =
      session_.Seal(FrameType::kAbort, reason.substr(0, kMaxAbortReasonBytes), send_seq_++);
  if (sealed) (void)port.Send(step, *sealed);
}

StreamPort::StreamPort(ByteChannel channel, std::string name, uint32_t max_payload_bytes)
    : channel_(std::move(channel)), name_(std::move(name)), max_payload_bytes_(max_payload_bytes) {}

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

Result<void> StreamPort::ReadExactly(char* buf, size_t want, const Step& step, size_t before,
                                     size_t frame_bytes) {
  size_t got = 0;
  auto progress = [&] {
    const size_t have = before + got;
    return have == 0 ? std::string("before sending its ") + step.what()
                     : "mid-message: got " + std::to_string(have) + " of " +
                           std::to_string(frame_bytes) + " bytes of its " + step.what() + " frame";
  };
  while (got < want) {
    const size_t max = want - got;
    Result<size_t> n = Clock::now() >= step.deadline
                           ? MakeError(ErrorCode::kTimeout, "", "")
                           : Guarded<size_t>("receive", [&] {
                               return channel_.receive(buf + got, max, step.deadline);
                             });
    if (!n) {
      Error e = std::move(n).error();
      if (e.code == ErrorCode::kTimeout) {
        const size_t have = before + got;
        e.detail = (have == 0 ? std::string("the peer sent nothing within ") + MsText(step.total) +
                                    " (waiting for its " + step.what() + ")"
                              : "got " + std::to_string(have) + " bytes of the peer's " +
                                    step.what() + " frame within " + MsText(step.total)) +
                   (e.detail.empty() ? std::string() : " (" + e.detail + ")");
      } else {
        e.detail += (e.detail.empty() ? "" : " ") + ("(" + progress() + ")");
      }
      return Within(std::move(e), "receive from " + name_);
    }
    if (*n == 0) {
      return MakeError(ErrorCode::kIo, "receive from " + name_,
                       "the peer closed the connection " + progress());
    }
    if (*n > max) {
      return MakeError(ErrorCode::kIo, "receive from " + name_,
                       "the channel's receive() returned " + std::to_string(*n) +
                           " bytes, more than the " + std::to_string(max) + " asked for");
    }
    got += *n;
  }
  return Ok();
}

Result<Frame> StreamPort::Receive(const Step& step) {
  char header_bytes[kFrameHeaderBytes];
  QPC_TRY(ReadExactly(header_bytes, kFrameHeaderBytes, step, 0, kFrameHeaderBytes));
  auto header =
      DecodeFrameHeader(std::string_view(header_bytes, kFrameHeaderBytes), max_payload_bytes_);
  if (!header) return Within(std::move(header).error(), "receive from " + name_);
  const size_t body_bytes = header->BodyBytes();
  const size_t frame_bytes = kFrameHeaderBytes + body_bytes;
  std::string body;
  while (body.size() < body_bytes) {
    const size_t have = body.size();
    const size_t slice = std::min(kReadSlice, body_bytes - have);
    body.resize(have + slice);
    QPC_TRY(ReadExactly(body.data() + have, slice, step, kFrameHeaderBytes + have, frame_bytes));
  }
  Frame f;
  f.type = header->type;
  f.flags = header->flags;
  f.mac = body.substr(header->payload_bytes);
  body.resize(header->payload_bytes);
  f.payload = std::move(body);
  return f;
}

}  // namespace qpconnect::oob::internal
