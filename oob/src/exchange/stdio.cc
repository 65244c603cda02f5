// SPDX-License-Identifier: MIT
#include "qpconnect/oob/stdio.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>

#include "asio_deadline.h"
#include "codec/base64.h"
#include "driver.h"
#include "transport.h"

namespace qpconnect::oob {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using internal::AsioError;
using internal::MakeError;
using internal::MsText;
using internal::Printable;

namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Quoted peer text is cut shorter on a line than elsewhere.
constexpr size_t kQuoteBytes = 60;

// "qpcN:" with N a number other than 1: the version of the line, else empty.
std::string_view OtherLineVersion(std::string_view line) {
  if (line.substr(0, 3) != "qpc") return {};
  size_t i = 3;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == 3 || i >= line.size() || line[i] != ':') return {};
  return line.substr(0, i);
}

// Makes an fd non-blocking for its lifetime, then restores its file status
// flags. Asio sets O_NONBLOCK on the descriptors it waits on; the caller's
// stdin/stdout (and whoever shares them) must not keep it between calls.
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
                     "not a qpc1: line: '" + Printable(line, kQuoteBytes) + "'");
  }
  line.remove_prefix(kStdioLinePrefix.size());
  size_t bad_at = 0;
  auto bytes = internal::Base64UrlDecode(line, &bad_at);
  if (!bytes) {
    return MakeError(ErrorCode::kProtocol, "decode stdio line",
                     bad_at < line.size()
                         ? "not base64url: byte '" +
                               Printable(line.substr(bad_at, 1), kQuoteBytes) + "' at column " +
                               std::to_string(bad_at + kStdioLinePrefix.size() + 1)
                         : "truncated base64url (" + std::to_string(line.size()) + " characters)");
  }
  return std::move(*bytes);
}

// A transport of the protocol driver: each frame is one line, written while
// input is read ahead, so two sides that both write long lines into pipes do
// not deadlock whatever order the driver sends in.
class StdioExchanger::Impl final : public internal::FramePort, public internal::Transport {
 public:
  explicit Impl(StdioOptions o)
      : Transport(*this, DriverOptionsOf(o)), max_skipped_(o.max_skipped_bytes) {}

  ~Impl() override;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Hands `in_fd` and `out_fd` (may be the same) to Asio, which releases
  // them on destruction: the caller's stdin/stdout are never closed. kIo if
  // one cannot be registered.
  Result<void> Attach(int in_fd, int out_fd);

  // FramePort.
  std::string Name() const override { return "stdio"; }
  Result<void> Send(const internal::Step& step, std::string_view bytes) override;
  Result<Frame> Receive(const internal::Step& step) override;
  Result<std::optional<Frame>> Poll(const internal::Step& step) override;

 private:
  // Without a PSK: no hellos, one unbound line each way. Both sides write
  // first: a write never waits for the peer, since input is read meanwhile.
  static internal::DriverOptions DriverOptionsOf(StdioOptions& o) {
    internal::DriverOptions d = internal::SharedDriverOptions(o);
    d.role = o.role;
    d.order = SendOrder::kBothFirst;
    d.hello_without_psk = false;
    return d;
  }
  // The frame on the line taken from line_ (which is cleared).
  Result<Frame> FrameOfLine(const internal::Step& step);
  // Starts one read of the input into chunk_ unless one is outstanding; its
  // handler appends to in_buf_, sets eof_ at the end of input and keeps a
  // failure in read_error_, so a read completing as it is cancelled loses
  // nothing.
  void StartRead();
  // Cancels what is outstanding on either descriptor and runs the handlers.
  void CancelAndDrain();
  // The failure kept from reading ahead (which is cleared).
  Error TakeReadError() {
    Error e = std::move(*read_error_);
    read_error_.reset();
    return e;
  }
  // Writes all of `out` (may be empty) while reading input ahead, until
  // `out` is written and, with `want_line`, the peer's next qpc line is in
  // line_. Without `want_line` a read failure is kept for Receive().
  Result<void> Pump(std::string_view out, const internal::Step& step, bool want_line);
  // A complete line from in_buf_, if one is there (or at EOF the rest).
  // Skips noise; errors for garbage; a line longer than a frame of
  // `max_payload` bytes can take is refused. Sets *found when it returns a
  // line.
  Result<std::string> TakeLine(bool* found, const char* what, uint32_t max_payload);

  asio::io_context io_;
  asio::posix::stream_descriptor in_{io_};
  asio::posix::stream_descriptor out_own_{io_};
  asio::posix::stream_descriptor* out_ = &in_;  // &out_own_ unless in == out
  std::array<char, kReadChunk> chunk_{};
  bool read_pending_ = false;
  bool write_pending_ = false;
  size_t max_skipped_;
  std::string in_buf_;
  size_t scan_from_ = 0;  // in_buf_[0, scan_from_) holds no '\n'
  bool eof_ = false;
  std::optional<std::string> line_;  // the peer's next qpc line, read ahead
  std::optional<Error> read_error_;  // a failure while reading ahead
  // Other lines skipped while looking for the current message.
  size_t skipped_bytes_ = 0;
  size_t skipped_lines_ = 0;
  std::string first_skipped_;
};

Result<std::string> StdioExchanger::Impl::TakeLine(bool* found, const char* what,
                                                   uint32_t max_payload) {
  *found = false;
  const size_t max_line =
      kStdioLinePrefix.size() +
      internal::Base64UrlLength(kFrameHeaderBytes + size_t{max_payload} + kFrameMacBytes) + 256;
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
      if (skipped_lines_ == 0) first_skipped_ = Printable(line, kQuoteBytes);
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

Result<void> StdioExchanger::Impl::Attach(int in_fd, int out_fd) {
  error_code ec;
  in_.assign(in_fd, ec);
  if (ec) return AsioError(ErrorCode::kIo, ec, "stdio exchanger: input", "");
  if (out_fd != in_fd) {  // one descriptor both ways (a socket) is registered once
    out_own_.assign(out_fd, ec);
    if (ec) return AsioError(ErrorCode::kIo, ec, "stdio exchanger: output", "");
    out_ = &out_own_;
  }
  return Ok();
}

StdioExchanger::Impl::~Impl() {
  // The descriptors are the caller's: released, never closed.
  if (in_.is_open()) in_.release();
  if (out_own_.is_open()) out_own_.release();
}

void StdioExchanger::Impl::StartRead() {
  if (read_pending_) return;
  read_pending_ = true;
  in_.async_read_some(asio::buffer(chunk_), [this](const error_code& ec, size_t n) {
    read_pending_ = false;
    in_buf_.append(chunk_.data(), n);
    if (ec == asio::error::eof) {
      eof_ = true;
    } else if (ec && ec != asio::error::operation_aborted && !read_error_) {
      read_error_ = AsioError(ErrorCode::kIo, ec, "read from stdio", "");
    }
  });
}

void StdioExchanger::Impl::CancelAndDrain() {
  if (!read_pending_ && !write_pending_) return;
  error_code ignored;
  in_.cancel(ignored);
  out_->cancel(ignored);
  io_.restart();
  io_.run();
}

Result<void> StdioExchanger::Impl::Pump(std::string_view out, const internal::Step& step,
                                        bool want_line) {
  SigpipeGuard sigpipe;
  NonBlocking in_flags(in_.native_handle());
  std::optional<NonBlocking> out_flags;
  if (!out.empty()) out_flags.emplace(out_->native_handle());
  const char* what = step.what();
  size_t written = 0;
  error_code write_ec;
  // Whatever way this returns, nothing stays outstanding on the locals above.
  struct Drain {
    Impl* self;
    ~Drain() { self->CancelAndDrain(); }
  } drain{this};
  for (;;) {
    if (!line_ && !read_error_) {
      bool found = false;
      auto taken = TakeLine(&found, what, step.max_payload);
      if (!taken) {
        if (want_line) return std::move(taken).error();
        read_error_ = std::move(taken).error();
      } else if (found) {
        line_ = std::move(*taken);
      }
    }
    if (write_ec) {
      if (write_ec == asio::error::broken_pipe) sigpipe.OnEpipe();
      return AsioError(
          ErrorCode::kIo, write_ec, "write to stdio",
          write_ec == asio::error::broken_pipe ? "the reader of our output is gone" : "");
    }
    if (want_line && read_error_) return TakeReadError();
    const bool reading = !line_ && !read_error_ && !eof_;
    if (written == out.size() && (!want_line || !reading)) break;
    if (internal::StopRequested()) {
      // Cancel() or the interrupt flag: ends as the deadline would; the
      // driver reports the stop (stop.h).
      return MakeError(ErrorCode::kTimeout, "exchange over stdio", "stopped");
    }
    if (Clock::now() >= step.deadline) {
      std::string detail;
      if (written < out.size()) {
        detail = "our line was not taken within " + MsText(step.total) + " (" +
                 std::to_string(written) + " of " + std::to_string(out.size()) + " bytes written)";
      } else {
        detail = in_buf_.empty() && skipped_lines_ == 0
                     ? std::string("no input within ") + MsText(step.total) +
                           " (waiting for the peer's " + what + " line)"
                     : std::string("the peer's ") + what + " line did not complete within " +
                           MsText(step.total) + " (" + std::to_string(in_buf_.size()) +
                           " bytes so far)";
      }
      return MakeError(ErrorCode::kTimeout, "exchange over stdio", detail);
    }
    // Reads ahead while writing, so two sides writing long lines into each
    // other's pipes never both wait on a full pipe.
    if (reading) StartRead();
    if (written < out.size() && !write_pending_) {
      write_pending_ = true;
      out_->async_write_some(asio::buffer(out.data() + written, out.size() - written),
                             [this, &written, &write_ec](const error_code& ec, size_t n) {
                               write_pending_ = false;
                               written += n;
                               if (ec && ec != asio::error::operation_aborted) write_ec = ec;
                             });
    }
    // Until either completes, or the deadline (both cancelled, checked above).
    const bool was_reading = read_pending_;
    const bool was_writing = write_pending_;
    internal::RunUntil(
        io_, step.deadline,
        [&] { return (was_reading && !read_pending_) || (was_writing && !write_pending_); },
        [this] {
          error_code ignored;
          in_.cancel(ignored);
          out_->cancel(ignored);
        });
  }
  if (want_line && !line_ && !read_error_) {
    std::string detail = std::string("end of input before the peer's ") + what + " line";
    if (skipped_lines_ > 0) {
      detail += " (" + std::to_string(skipped_lines_) + " other line" +
                (skipped_lines_ == 1 ? "" : "s") + " skipped, first: '" + first_skipped_ + "')";
    }
    return MakeError(ErrorCode::kIo, "read from stdio", detail);
  }
  return Ok();
}

Result<void> StdioExchanger::Impl::Send(const internal::Step& step, std::string_view bytes) {
  return Pump(EncodeStdioLine(bytes), step, /*want_line=*/false);
}

Result<Frame> StdioExchanger::Impl::FrameOfLine(const internal::Step& step) {
  const std::string line = std::move(*line_);
  line_.reset();
  skipped_bytes_ = 0;
  skipped_lines_ = 0;
  first_skipped_.clear();
  auto bytes = DecodeStdioLine(line);
  if (!bytes) return std::move(bytes).error();
  auto frame = DecodeFrame(*bytes, step.max_payload);
  if (!frame) {
    Error e = step.WithCapNote(std::move(frame).error());
    e.operation = std::string("stdio: the peer's ") + step.what() + " line: " + e.operation;
    return e;
  }
  return frame;
}

Result<Frame> StdioExchanger::Impl::Receive(const internal::Step& step) {
  if (!line_ && !read_error_) QPC_TRY(Pump({}, step, /*want_line=*/true));
  if (read_error_) return TakeReadError();
  return FrameOfLine(step);
}

Result<std::optional<Frame>> StdioExchanger::Impl::Poll(const internal::Step& step) {
  // Reads what is there without waiting, as Pump() would.
  while (!line_ && !read_error_ && !eof_) {
    bool found = false;
    auto taken = TakeLine(&found, step.what(), step.max_payload);
    if (!taken) return std::move(taken).error();
    if (found) {
      line_ = std::move(*taken);
      break;
    }
    // What is there, without waiting: a read bounded by a deadline that has
    // passed.
    NonBlocking in_flags(in_.native_handle());
    StartRead();
    const size_t before = in_buf_.size();
    internal::RunUntil(
        io_, Clock::now(), [&] { return !read_pending_; },
        [this] {
          error_code ignored;
          in_.cancel(ignored);
        });
    if (in_buf_.size() == before && !eof_ && !read_error_) break;  // nothing there
    if (read_error_) break;
    if (eof_) {
      bool last = false;  // a last line without its '\n'
      auto rest = TakeLine(&last, step.what(), step.max_payload);
      if (!rest) return std::move(rest).error();
      if (last) line_ = std::move(*rest);
    }
  }
  if (read_error_) return TakeReadError();
  if (line_) {
    auto frame = FrameOfLine(step);
    if (!frame) return std::move(frame).error();
    return std::optional<Frame>(std::move(*frame));
  }
  if (eof_) {
    return MakeError(ErrorCode::kIo, "read from stdio",
                     "end of input: the peer closed its output (it exited or was killed)");
  }
  return std::optional<Frame>();
}

StdioExchanger::StdioExchanger(std::unique_ptr<Impl> impl) : ProtocolExchanger(std::move(impl)) {}

Result<std::unique_ptr<StdioExchanger>> StdioExchanger::Create(int in_fd, int out_fd,
                                                               StdioOptions options) {
  if (in_fd < 0 || out_fd < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "stdio exchanger", "negative file descriptor");
  }
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "stdio exchanger options"));
  auto impl = std::make_unique<Impl>(std::move(options));
  QPC_TRY(impl->Attach(in_fd, out_fd));
  return std::unique_ptr<StdioExchanger>(new StdioExchanger(std::move(impl)));
}

}  // namespace qpconnect::oob
