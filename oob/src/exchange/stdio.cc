#include "qpconnect/oob/stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "base64url.h"
#include "session.h"

namespace qpconnect::oob {

using Clock = std::chrono::steady_clock;
using internal::MakeError;

namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string Printable(std::string_view s, size_t max = 60) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string Ms(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

// "qpcN:" with N a number other than 1: the version of the line, else empty.
std::string_view OtherLineVersion(std::string_view line) {
  if (line.substr(0, 3) != "qpc") return {};
  size_t i = 3;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == 3 || i >= line.size() || line[i] != ':') return {};
  return line.substr(0, i);
}

// Restores an fd's file status flags on destruction.
class NonBlocking {
 public:
  explicit NonBlocking(int fd) : fd_(fd), flags_(::fcntl(fd, F_GETFL)) {
    if (flags_ >= 0 && (flags_ & O_NONBLOCK) == 0) {
      changed_ = ::fcntl(fd, F_SETFL, flags_ | O_NONBLOCK) == 0;
    }
  }
  ~NonBlocking() {
    if (changed_) ::fcntl(fd_, F_SETFL, flags_);
  }
  NonBlocking(const NonBlocking&) = delete;
  NonBlocking& operator=(const NonBlocking&) = delete;

 private:
  int fd_;
  int flags_;
  bool changed_ = false;
};

// Blocks SIGPIPE in this thread for its lifetime, and swallows one raised by
// our own write to a closed pipe.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  void OnEpipe() { raised_ = true; }
  ~SigpipeGuard() {
    if (raised_ && !was_pending_) {
      timespec zero{};
      sigtimedwait(&set_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t set_{};
  sigset_t old_{};
  bool was_pending_ = false;
  bool raised_ = false;
};

}  // namespace

std::string EncodeStdioLine(std::string_view frame_bytes) {
  std::string line(kStdioLinePrefix);
  line += internal::Base64UrlEncode(frame_bytes);
  line += '\n';
  return line;
}

Result<std::string> DecodeStdioLine(std::string_view line) {
  line = Trim(line);
  if (line.substr(0, kStdioLinePrefix.size()) != kStdioLinePrefix) {
    const auto version = OtherLineVersion(line);
    if (!version.empty()) {
      return MakeError(ErrorCode::kIncompatible, "decode stdio line",
                       "line version '" + std::string(version) +
                           "' is not supported; this build "
                           "reads 'qpc1:' lines",
                       "version");
    }
    return MakeError(ErrorCode::kProtocol, "decode stdio line",
                     "not a qpc1: line: '" + Printable(line) + "'");
  }
  line.remove_prefix(kStdioLinePrefix.size());
  size_t bad_at = 0;
  auto bytes = internal::Base64UrlDecode(line, &bad_at);
  if (!bytes) {
    return MakeError(ErrorCode::kProtocol, "decode stdio line",
                     bad_at < line.size()
                         ? "not base64url: byte '" + Printable(line.substr(bad_at, 1)) +
                               "' at column " + std::to_string(bad_at + kStdioLinePrefix.size() + 1)
                         : "truncated base64url (" + std::to_string(line.size()) + " characters)");
  }
  return std::move(*bytes);
}

class StdioExchanger::Impl {
 public:
  Impl(int in_fd, int out_fd, StdioOptions o)
      : in_(in_fd),
        out_(out_fd),
        session_(std::move(o.psk)),
        cap_(o.max_payload_bytes),
        max_skipped_(o.max_skipped_bytes) {
    session_.set_channel("stdio");
  }

  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline);
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline);
  void Abort(std::string_view reason, Clock::time_point deadline);

 private:
  // Writes all of `out` by `deadline`; false if it could not.
  bool WriteOnly(std::string_view out, Clock::time_point deadline);
  // Writes `out` while reading the peer's next qpc line; returns its frame.
  Result<Frame> SendAndReceive(std::string_view out, const char* what, Clock::time_point deadline,
                               Clock::duration total);
  // A complete line from in_buf_, if one is there (or at EOF the rest).
  // Skips noise; errors for garbage. Sets *found when it returns a line.
  Result<std::string> TakeLine(bool* found, const char* what);

  int in_;
  int out_;
  internal::Session session_;
  uint32_t cap_;
  size_t max_skipped_;
  std::string in_buf_;
  size_t scan_from_ = 0;  // in_buf_[0, scan_from_) holds no '\n'
  bool eof_ = false;
  bool exchanged_ = false;
  uint32_t send_seq_ = 0;
  uint32_t recv_seq_ = 0;
  // Other lines skipped while looking for the current message.
  size_t skipped_bytes_ = 0;
  size_t skipped_lines_ = 0;
  std::string first_skipped_;
};

Result<std::string> StdioExchanger::Impl::TakeLine(bool* found, const char* what) {
  *found = false;
  const size_t max_line =
      kStdioLinePrefix.size() +
      internal::Base64UrlLength(kFrameHeaderBytes + size_t{cap_} + kFrameMacBytes) + 256;
  // Lines are consumed by advancing `start` and erased once on the way out, so
  // a flood of short lines costs linear time; `scan_from_` remembers how far
  // an unfinished line has been searched for its '\n'.
  size_t start = 0;
  for (;;) {
    const size_t nl = in_buf_.find('\n', std::max(start, scan_from_));
    const std::string_view rest = std::string_view(in_buf_).substr(start);
    std::string_view raw;
    if (nl != std::string::npos) {
      raw = std::string_view(in_buf_).substr(start, nl - start);
    } else if (eof_ && !rest.empty()) {
      raw = rest;
    } else {
      // No whole line yet: bound what an unfinished line may take.
      const std::string_view partial = Trim(rest);
      const bool ours = partial.substr(0, 3) ==
                        std::string_view("qpc").substr(0, std::min<size_t>(3, partial.size()));
      if (ours ? rest.size() > max_line : skipped_bytes_ + rest.size() > max_skipped_) {
        return MakeError(ErrorCode::kProtocol, "read from stdio",
                         ours ? "line longer than " + std::to_string(max_line) +
                                    " bytes (the frame cap allows no longer)"
                              : "more than " + std::to_string(max_skipped_) +
                                    " bytes of other text before the peer's " + what + " line");
      }
      in_buf_.erase(0, start);
      scan_from_ = in_buf_.size();
      return std::string();
    }
    const size_t end = nl != std::string::npos ? nl + 1 : in_buf_.size();
    const std::string_view line = Trim(raw);
    if (line.substr(0, 3) == "qpc") {
      std::string out(line);
      in_buf_.erase(0, end);
      scan_from_ = 0;
      *found = true;
      return out;
    }
    skipped_bytes_ += end - start;
    if (!line.empty()) {
      if (skipped_lines_ == 0) first_skipped_ = Printable(line);
      ++skipped_lines_;
    }
    if (skipped_bytes_ > max_skipped_) {
      return MakeError(ErrorCode::kProtocol, "read from stdio",
                       "more than " + std::to_string(max_skipped_) +
                           " bytes of other text before the peer's " + what + " line" +
                           (skipped_lines_ > 0 ? " (first: '" + first_skipped_ + "')" : ""));
    }
    start = end;
  }
}

Result<Frame> StdioExchanger::Impl::SendAndReceive(std::string_view out, const char* what,
                                                   Clock::time_point deadline,
                                                   Clock::duration total) {
  skipped_bytes_ = 0;
  skipped_lines_ = 0;
  first_skipped_.clear();
  SigpipeGuard sigpipe;
  NonBlocking nonblocking(out_);
  std::optional<std::string> line;
  size_t written = 0;
  for (;;) {
    if (!line) {
      bool found = false;
      auto taken = TakeLine(&found, what);
      if (!taken) return std::move(taken).error();
      if (found) line = std::move(*taken);
    }
    if (line && written == out.size()) break;
    if (!line && eof_) {
      std::string detail = std::string("end of input before the peer's ") + what + " line";
      if (skipped_lines_ > 0) {
        detail += " (" + std::to_string(skipped_lines_) + " other line" +
                  (skipped_lines_ == 1 ? "" : "s") + " skipped, first: '" + first_skipped_ + "')";
      }
      return MakeError(ErrorCode::kIo, "read from stdio", detail);
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      std::string detail;
      if (!line) {
        detail = in_buf_.empty() && skipped_lines_ == 0
                     ? std::string("no input within ") + Ms(total) + " (waiting for the peer's " +
                           what + " line)"
                     : std::string("the peer's ") + what + " line did not complete within " +
                           Ms(total) + " (" + std::to_string(in_buf_.size()) + " bytes so far)";
      } else {
        detail = "our line was not taken within " + Ms(total) + " (" + std::to_string(written) +
                 " of " + std::to_string(out.size()) + " bytes written)";
      }
      return MakeError(ErrorCode::kTimeout, "exchange over stdio", detail);
    }
    pollfd fds[2];
    nfds_t n = 0;
    int in_slot = -1;
    int out_slot = -1;
    if (!line) {
      in_slot = static_cast<int>(n);
      fds[n++] = pollfd{in_, POLLIN, 0};
    }
    if (written < out.size()) {
      out_slot = static_cast<int>(n);
      fds[n++] = pollfd{out_, POLLOUT, 0};
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    const int rc = ::poll(fds, n, static_cast<int>(std::min<int64_t>(left, 60000)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(ErrorCode::kIo, errno, "poll stdio");
    }
    if (rc == 0) continue;
    if (out_slot >= 0 && fds[out_slot].revents != 0) {
      const ssize_t w = ::write(out_, out.data() + written, out.size() - written);
      if (w > 0) {
        written += static_cast<size_t>(w);
      } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        const int err = errno;
        if (err == EPIPE) sigpipe.OnEpipe();
        return ErrnoError(ErrorCode::kIo, err, "write to stdio",
                          err == EPIPE ? "the reader of our output is gone" : "");
      }
    }
    if (in_slot >= 0 && fds[in_slot].revents != 0) {
      char buf[kReadChunk];
      const ssize_t r = ::read(in_, buf, sizeof buf);
      if (r > 0) {
        in_buf_.append(buf, static_cast<size_t>(r));
      } else if (r == 0) {
        eof_ = true;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ErrnoError(ErrorCode::kIo, errno, "read from stdio");
      }
    }
  }
  auto bytes = DecodeStdioLine(*line);
  if (!bytes) return std::move(bytes).error();
  auto frame = DecodeFrame(*bytes, cap_);
  if (!frame) {
    Error e = std::move(frame).error();
    e.operation = std::string("stdio: the peer's ") + what + " line: " + e.operation;
    return e;
  }
  return frame;
}

Result<EndpointInfo> StdioExchanger::Impl::Exchange(const EndpointInfo& local,
                                                    Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  exchanged_ = false;
  auto body = internal::EncodeLocal(local);
  if (!body) return std::move(body).error();
  if (body->size() + internal::kBindingBytes > cap_) {
    return MakeError(ErrorCode::kInvalidArgument, "encode local description",
                     "the description takes " + std::to_string(body->size()) +
                         " bytes, above the frame cap of " + std::to_string(cap_));
  }
  QPC_TRY(session_.Begin());
  send_seq_ = 0;
  recv_seq_ = 0;
  if (session_.has_psk()) {
    auto hello = SendAndReceive(EncodeStdioLine(session_.EncodeHello()), "hello", deadline, total);
    if (!hello) return std::move(hello).error();
    QPC_TRY(session_.AcceptHello(*hello));
  }
  auto sealed = session_.Seal(FrameType::kEndpoint, *body, send_seq_++);
  if (!sealed) return std::move(sealed).error();
  auto frame = SendAndReceive(EncodeStdioLine(*sealed), "description", deadline, total);
  if (!frame) return std::move(frame).error();
  auto opened = session_.Open(*frame, FrameType::kEndpoint, recv_seq_++);
  if (!opened) return std::move(opened).error();
  auto info = internal::DecodePeer(*opened, "stdio");
  exchanged_ = info.has_value();
  return info;
}

Result<void> StdioExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  QPC_TRY(internal::CheckStage(stage));
  if (!exchanged_) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "Barrier() needs a successful Exchange() first");
  }
  auto sealed = session_.Seal(FrameType::kBarrier, stage, send_seq_++);
  if (!sealed) return std::move(sealed).error();
  auto frame = SendAndReceive(EncodeStdioLine(*sealed), "barrier", deadline, total);
  if (!frame) return std::move(frame).error();
  auto opened = session_.Open(*frame, FrameType::kBarrier, recv_seq_++);
  if (!opened) return std::move(opened).error();
  return internal::MatchStage(*opened, stage, "stdio");
}

bool StdioExchanger::Impl::WriteOnly(std::string_view out, Clock::time_point deadline) {
  SigpipeGuard sigpipe;
  NonBlocking nonblocking(out_);
  size_t written = 0;
  while (written < out.size()) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    pollfd p{out_, POLLOUT, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60000)));
    if (rc < 0 && errno != EINTR) return false;
    if (rc <= 0) continue;
    const ssize_t w = ::write(out_, out.data() + written, out.size() - written);
    if (w > 0) {
      written += static_cast<size_t>(w);
    } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      if (errno == EPIPE) sigpipe.OnEpipe();
      return false;
    }
  }
  return true;
}

void StdioExchanger::Impl::Abort(std::string_view reason, Clock::time_point deadline) {
  exchanged_ = false;
  if (session_.has_psk() && !session_.peer_nonce()) return;  // nothing the peer could verify
  auto sealed = session_.Seal(FrameType::kAbort, reason.substr(0, 1024), send_seq_++);
  if (sealed) (void)WriteOnly(EncodeStdioLine(*sealed), deadline);
}

StdioExchanger::StdioExchanger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StdioExchanger::~StdioExchanger() = default;

Result<std::unique_ptr<StdioExchanger>> StdioExchanger::Create(int in_fd, int out_fd,
                                                               StdioOptions options) {
  if (in_fd < 0 || out_fd < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "stdio exchanger", "negative file descriptor");
  }
  if (options.max_payload_bytes < 64 || options.max_payload_bytes > kMaxPayloadBytesLimit) {
    return MakeError(
        ErrorCode::kInvalidArgument, "stdio exchanger options",
        "max_payload_bytes must be between 64 and " + std::to_string(kMaxPayloadBytesLimit));
  }
  return std::unique_ptr<StdioExchanger>(
      new StdioExchanger(std::make_unique<Impl>(in_fd, out_fd, std::move(options))));
}

Result<EndpointInfo> StdioExchanger::Exchange(const EndpointInfo& local,
                                              std::chrono::milliseconds deadline) {
  return impl_->Exchange(local, Clock::now() + deadline);
}

Result<void> StdioExchanger::Barrier(std::string_view stage, std::chrono::milliseconds deadline) {
  return impl_->Barrier(stage, Clock::now() + deadline);
}

void StdioExchanger::Abort(std::string_view reason, std::chrono::milliseconds deadline) {
  impl_->Abort(reason, Clock::now() + deadline);
}

}  // namespace qpconnect::oob
