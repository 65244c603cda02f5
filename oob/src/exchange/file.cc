#include "qpconnect/oob/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "session.h"

namespace qpconnect::oob {

using Clock = std::chrono::steady_clock;
using internal::MakeError;

namespace {

bool ValidName(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string Ms(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

Result<void> WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(ErrorCode::kIo, errno, "write");
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

struct PeerFile {
  Frame frame;
  dev_t dev = 0;
  ino_t ino = 0;
};

}  // namespace

class FileExchanger::Impl {
 public:
  explicit Impl(FileOptions o) : o_(std::move(o)), session_(std::move(o_.psk)) {}

  Result<void> Open();
  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline);
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline);
  void Abort(std::string_view reason);
  // Removes this side's files; with `keep_abort`, not its abort file.
  void RemoveOwnFiles(bool keep_abort = false);
  bool aborted() const { return aborted_; }

  std::string Name(std::string_view role, std::string_view kind) const {
    return o_.session + "." + std::string(role) + "." + std::string(kind);
  }
  std::filesystem::path PathOf(std::string_view role, std::string_view kind) const {
    return o_.directory / Name(role, kind);
  }

 private:
  Result<void> WriteOwn(std::string_view kind, std::string_view bytes);
  void RemoveOwn(std::string_view kind);
  // The peer's file of `kind`: nullopt when absent.
  Result<std::optional<PeerFile>> ReadPeer(std::string_view kind);
  // Removes the peer's file of `kind` if it is still the one that was read.
  void Consume(std::string_view kind, const PeerFile& f);
  bool OwnExists(std::string_view kind);
  // The peer's abort file, if it is bound to this session: its error.
  Result<void> CheckPeerAbort(FrameType expected, uint32_t seq, bool learn);
  void StartWatch();
  // Waits for a change in the directory, at most poll_interval; false once
  // `deadline` has passed.
  bool Wait(Clock::time_point deadline);
  Error FileError(Error e, std::string_view role, std::string_view kind) const {
    e.operation = "file " + PathOf(role, kind).string() +
                  (e.operation.empty() ? std::string() : ": " + e.operation);
    return e;
  }

  // Errors about the peer's message. After them this side's own files stay
  // (until the next Exchange() or destruction) so that the peer can read them
  // and fail with its own, symmetric error instead of a timeout.
  static bool PeerCaused(ErrorCode code) {
    return code == ErrorCode::kProtocol || code == ErrorCode::kAuth ||
           code == ErrorCode::kIncompatible;
  }

  FileOptions o_;
  internal::Session session_;
  bool aborted_ = false;  // S.R.abort written and left for the peer
  Fd dir_;
  Fd inotify_;
  bool exchanged_ = false;
  uint32_t barriers_ = 0;
};

Result<void> FileExchanger::Impl::Open() {
  const int fd = ::open(o_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return ErrnoError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, err,
                      "open exchange directory " + o_.directory.string());
  }
  dir_ = Fd(fd);
  session_.set_channel("file " + PathOf(o_.peer_role, "*").string());
  return Ok();
}

void FileExchanger::Impl::StartWatch() {
  if (!o_.use_inotify || inotify_.get() >= 0) return;
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return;  // polling alone still works
  Fd ifd(fd);
  const uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM |
                        IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
  if (::inotify_add_watch(fd, o_.directory.c_str(), mask) < 0) return;
  inotify_ = std::move(ifd);
}

bool FileExchanger::Impl::Wait(Clock::time_point deadline) {
  const auto now = Clock::now();
  if (now >= deadline) return false;
  const auto wait = std::min<Clock::duration>(deadline - now, o_.poll_interval);
  const int ms = static_cast<int>(
      std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()));
  if (inotify_.get() >= 0) {
    pollfd p{inotify_.get(), POLLIN, 0};
    if (::poll(&p, 1, ms) > 0) {
      alignas(inotify_event) char buf[4096];
      while (::read(inotify_.get(), buf, sizeof buf) > 0) {
      }
    }
  } else {
    ::poll(nullptr, 0, ms);
  }
  return true;
}

Result<void> FileExchanger::Impl::WriteOwn(std::string_view kind, std::string_view bytes) {
  auto nonce = RandomNonce();
  if (!nonce) return std::move(nonce).error();
  const std::string name = Name(o_.role, kind);
  const std::string tmp = "." + name + ".tmp." + internal::NonceHex(*nonce).substr(0, 12);
  const std::string where = (o_.directory / name).string();
  Fd fd(::openat(dir_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                 0600));
  if (fd.get() < 0) return ErrnoError(ErrorCode::kIo, errno, "create temporary file for " + where);
  auto fail = [&](const char* what) {
    const int err = errno;
    ::unlinkat(dir_.get(), tmp.c_str(), 0);
    return ErrnoError(ErrorCode::kIo, err, std::string(what) + " " + where);
  };
  if (::fchmod(fd.get(), 0600) != 0) return fail("chmod");
  auto written = WriteAll(fd.get(), bytes);
  if (!written) {
    ::unlinkat(dir_.get(), tmp.c_str(), 0);
    Error e = std::move(written).error();
    e.operation = "write " + where;
    return e;
  }
  if (::fsync(fd.get()) != 0) return fail("fsync");
  fd.Reset();
  if (::renameat(dir_.get(), tmp.c_str(), dir_.get(), name.c_str()) != 0) return fail("rename to");
  if (::fsync(dir_.get()) != 0 && errno != EINVAL) {
    return ErrnoError(ErrorCode::kIo, errno, "fsync directory " + o_.directory.string());
  }
  return Ok();
}

void FileExchanger::Impl::RemoveOwn(std::string_view kind) {
  ::unlinkat(dir_.get(), Name(o_.role, kind).c_str(), 0);
}

bool FileExchanger::Impl::OwnExists(std::string_view kind) {
  struct stat st {};
  return ::fstatat(dir_.get(), Name(o_.role, kind).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ||
         errno != ENOENT;
}

void FileExchanger::Impl::RemoveOwnFiles(bool keep_abort) {
  if (dir_.get() < 0) return;
  const int dup = ::dup(dir_.get());
  if (dup < 0) return;
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    ::close(dup);
    return;
  }
  ::rewinddir(d);
  const std::string mine = o_.session + "." + o_.role + ".";
  const std::string tmp = "." + mine;
  std::vector<std::string> doomed;
  while (dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n.substr(0, mine.size()) == mine || n.substr(0, tmp.size()) == tmp) {
      doomed.emplace_back(n);
    }
  }
  ::closedir(d);
  const std::string abort = Name(o_.role, "abort");
  for (const auto& n : doomed) {
    if (!(keep_abort && n == abort)) ::unlinkat(dir_.get(), n.c_str(), 0);
  }
  if (!keep_abort) aborted_ = false;
}

Result<std::optional<PeerFile>> FileExchanger::Impl::ReadPeer(std::string_view kind) {
  const std::string name = Name(o_.peer_role, kind);
  Fd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return std::optional<PeerFile>();
    if (err == ELOOP) {
      return FileError(MakeError(ErrorCode::kAuth, "", "refused: the file is a symbolic link"),
                       o_.peer_role, kind);
    }
    return FileError(ErrnoError(ErrorCode::kIo, err, "open"), o_.peer_role, kind);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return FileError(ErrnoError(ErrorCode::kIo, errno, "fstat"), o_.peer_role, kind);
  }
  if (!S_ISREG(st.st_mode)) {
    return FileError(MakeError(ErrorCode::kProtocol, "", "not a regular file"), o_.peer_role, kind);
  }
  if (st.st_uid != ::geteuid()) {
    return FileError(MakeError(ErrorCode::kAuth, "",
                               "refused: owned by uid " + std::to_string(st.st_uid) +
                                   ", not by this user (uid " + std::to_string(::geteuid()) + ")"),
                     o_.peer_role, kind);
  }
  const auto max_bytes =
      static_cast<off_t>(kFrameHeaderBytes + uint64_t{o_.max_payload_bytes} + kFrameMacBytes);
  if (st.st_size > max_bytes) {
    return FileError(MakeError(ErrorCode::kProtocol, "",
                               "oversized: " + std::to_string(st.st_size) +
                                   " bytes, above the frame cap of " + std::to_string(max_bytes),
                               "length"),
                     o_.peer_role, kind);
  }
  std::string bytes(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileError(ErrnoError(ErrorCode::kIo, errno, "read"), o_.peer_role, kind);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  auto frame = DecodeFrame(bytes, o_.max_payload_bytes);
  if (!frame) return FileError(std::move(frame).error(), o_.peer_role, kind);
  PeerFile f;
  f.frame = std::move(*frame);
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  return std::optional<PeerFile>(std::move(f));
}

void FileExchanger::Impl::Consume(std::string_view kind, const PeerFile& f) {
  const std::string name = Name(o_.peer_role, kind);
  struct stat st {};
  if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == f.dev &&
      st.st_ino == f.ino) {
    ::unlinkat(dir_.get(), name.c_str(), 0);
  }
}

Result<void> FileExchanger::Impl::CheckPeerAbort(FrameType expected, uint32_t seq, bool learn) {
  auto f = ReadPeer("abort");
  if (!f) return std::move(f).error();
  if (!*f) return Ok();
  const Frame& frame = f->value().frame;
  auto b = internal::PeekBinding(frame);
  if (frame.type != FrameType::kAbort || !b || b->receiver != session_.my_nonce()) {
    return Ok();  // another session's: not ours to act on
  }
  auto opened = session_.Open(frame, expected, seq, learn);
  if (!opened) {
    Consume("abort", f->value());  // read: the peer's side may go now
    return FileError(std::move(opened).error(), o_.peer_role, "abort");
  }
  return Ok();
}

void FileExchanger::Impl::Abort(std::string_view reason) {
  exchanged_ = false;
  if (!session_.peer_nonce()) return;
  auto sealed = session_.Seal(FrameType::kAbort, reason.substr(0, 1024), barriers_ + 1);
  if (sealed && WriteOwn("abort", *sealed)) aborted_ = true;
}

Result<EndpointInfo> FileExchanger::Impl::Exchange(const EndpointInfo& local,
                                                   Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  exchanged_ = false;
  barriers_ = 0;
  auto body = internal::EncodeLocal(local);
  if (!body) return std::move(body).error();
  if (body->size() + internal::kBindingBytes > o_.max_payload_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, "encode local description",
                     "the description takes " + std::to_string(body->size()) +
                         " bytes, above the frame cap of " + std::to_string(o_.max_payload_bytes));
  }
  QPC_TRY(session_.Begin());
  StartWatch();
  RemoveOwnFiles();

  std::optional<Nonce> bound_to;  // the peer nonce our description is bound to
  std::optional<EndpointInfo> received;
  bool mine_consumed = false;
  std::string stale;         // the last stale file refused, for the timeout message
  std::string psk_mismatch;  // the peer's hello disagrees about the PSK

  auto run = [&]() -> Result<EndpointInfo> {
    QPC_TRY(WriteOwn("hello", session_.EncodeHello()));
    for (;;) {
      std::optional<Nonce> target;
      if (received) {
        target = session_.peer_nonce();  // learnt from its bound description
      } else {
        auto hello = ReadPeer("hello");
        if (!hello) return std::move(hello).error();
        if (*hello) {
          const Frame& f = hello->value().frame;
          if (f.type != FrameType::kHello || f.payload.size() != kNonceBytes) {
            return FileError(MakeError(ErrorCode::kProtocol, "",
                                       std::string("expected a hello, found a ") +
                                           FrameTypeName(f.type) + " frame"),
                             o_.peer_role, "hello");
          }
          // The hello is unauthenticated and may be stale: a PSK mismatch
          // it shows is only reported if nothing better arrives.
          const bool peer_psk = (f.flags & kFrameFlagPsk) != 0;
          if (peer_psk != session_.has_psk()) {
            psk_mismatch = peer_psk ? "the peer's hello says it requires a pre-shared key, but "
                                      "none is configured on this side"
                                    : "this side requires a pre-shared key, but the peer's "
                                      "hello says it has none";
          } else {
            psk_mismatch.clear();
          }
          Nonce n{};
          std::copy(f.payload.begin(), f.payload.end(), n.begin());
          if (n != session_.my_nonce()) target = n;
        }
      }
      if (target && !mine_consumed && (!bound_to || *bound_to != *target)) {
        session_.set_peer_nonce(*target);
        auto sealed = session_.Seal(FrameType::kEndpoint, *body, 0);
        if (!sealed) return std::move(sealed).error();
        QPC_TRY(WriteOwn("qpc", *sealed));
        bound_to = target;
      }
      if (!received) {
        auto desc = ReadPeer("qpc");
        if (!desc) return std::move(desc).error();
        if (*desc) {
          const PeerFile& pf = desc->value();
          auto b = internal::PeekBinding(pf.frame);
          if (b && b->receiver != session_.my_nonce()) {
            stale = PathOf(o_.peer_role, "qpc").string() + " is bound to nonce " +
                    internal::NonceHex(b->receiver) + ", not this run's " +
                    internal::NonceHex(session_.my_nonce()) +
                    (session_.has_psk() ? ": replayed or stale (from another session), refused"
                                        : ": stale (left by an earlier run), refused");
          } else {
            auto opened = session_.Open(pf.frame, FrameType::kEndpoint, 0, true);
            if (!opened) return FileError(std::move(opened).error(), o_.peer_role, "qpc");
            auto info = internal::DecodePeer(*opened, PathOf(o_.peer_role, "qpc").string());
            if (!info) return std::move(info).error();
            received = std::move(*info);
            Consume("qpc", pf);
            RemoveOwn("hello");  // the peer has read it
            continue;            // rebind ours at once if the peer's nonce differs
          }
        }
      }
      QPC_TRY(CheckPeerAbort(FrameType::kEndpoint, 0, !received));
      if (bound_to && !mine_consumed && !OwnExists("qpc")) mine_consumed = true;
      if (received && mine_consumed) return std::move(*received);
      if (!Wait(deadline)) {
        std::string detail;
        if (!received && !bound_to) {
          detail = "no hello from the peer (" + PathOf(o_.peer_role, "hello").string() + ")";
        } else if (!received) {
          detail = "no description from the peer (" + PathOf(o_.peer_role, "qpc").string() + ")";
        } else {
          detail = "the peer did not pick up our description " + PathOf(o_.role, "qpc").string();
        }
        detail += " within " + Ms(total);
        if (!stale.empty()) detail += "; " + stale;
        // With a PSK, a refused message from another session is a replay,
        // and a hello without a key a peer that cannot authenticate: kAuth.
        if (!received && !psk_mismatch.empty()) {
          return MakeError(ErrorCode::kAuth, "file exchange in " + o_.directory.string(),
                           psk_mismatch + "; " + detail);
        }
        const bool replay = !received && !stale.empty() && session_.has_psk();
        return MakeError(replay ? ErrorCode::kAuth : ErrorCode::kTimeout,
                         "file exchange in " + o_.directory.string(), detail);
      }
    }
  };
  auto result = run();
  if (!result) {
    if (!PeerCaused(result.error().code)) RemoveOwnFiles();
    return result;
  }
  RemoveOwn("hello");
  exchanged_ = true;
  return result;
}

Result<void> FileExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  QPC_TRY(internal::CheckStage(stage));
  if (!exchanged_) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "Barrier() needs a successful Exchange() first");
  }
  const uint32_t seq = ++barriers_;
  const std::string kind = "barrier-" + std::to_string(seq);
  bool got = false;
  bool mine_consumed = false;
  std::string stale;
  auto run = [&]() -> Result<void> {
    auto sealed = session_.Seal(FrameType::kBarrier, stage, seq);
    if (!sealed) return std::move(sealed).error();
    QPC_TRY(WriteOwn(kind, *sealed));
    for (;;) {
      if (!got) {
        auto marker = ReadPeer(kind);
        if (!marker) return std::move(marker).error();
        if (*marker) {
          const PeerFile& pf = marker->value();
          auto b = internal::PeekBinding(pf.frame);
          if (b && b->receiver != session_.my_nonce()) {
            stale = PathOf(o_.peer_role, kind).string() + " is stale (another run's nonce)";
          } else {
            auto opened = session_.Open(pf.frame, FrameType::kBarrier, seq);
            if (!opened) return FileError(std::move(opened).error(), o_.peer_role, kind);
            Consume(kind, pf);
            QPC_TRY(internal::MatchStage(*opened, stage, PathOf(o_.peer_role, kind).string()));
            got = true;
          }
        }
      }
      QPC_TRY(CheckPeerAbort(FrameType::kBarrier, seq, false));
      if (!mine_consumed && !OwnExists(kind)) mine_consumed = true;
      if (got && mine_consumed) return Ok();
      if (!Wait(deadline)) {
        std::string detail =
            got ? "the peer did not pick up our marker " + PathOf(o_.role, kind).string()
                : "no marker from the peer (" + PathOf(o_.peer_role, kind).string() + ")";
        detail += " within " + Ms(total);
        if (!stale.empty()) detail += "; " + stale;
        return MakeError(ErrorCode::kTimeout, "barrier '" + std::string(stage) + "'", detail);
      }
    }
  };
  auto result = run();
  if (!result) {
    if (!PeerCaused(result.error().code)) RemoveOwn(kind);
    exchanged_ = false;
  }
  return result;
}

FileExchanger::FileExchanger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FileExchanger::~FileExchanger() {
  if (impl_) impl_->RemoveOwnFiles(/*keep_abort=*/impl_->aborted());
}

Result<std::unique_ptr<FileExchanger>> FileExchanger::Create(FileOptions options) {
  auto bad = [](std::string detail) {
    return MakeError(ErrorCode::kInvalidArgument, "file exchanger options", std::move(detail));
  };
  if (!ValidName(options.session, 64)) {
    return bad("session '" + options.session + "' must be 1-64 of [A-Za-z0-9_-]");
  }
  if (!ValidName(options.role, 32) || !ValidName(options.peer_role, 32)) {
    return bad("roles must be 1-32 of [A-Za-z0-9_-]");
  }
  if (options.role == options.peer_role)
    return bad("role and peer_role are both '" + options.role + "'");
  if (options.poll_interval.count() <= 0) return bad("poll_interval must be positive");
  if (options.max_payload_bytes < 64 || options.max_payload_bytes > kMaxPayloadBytesLimit) {
    return bad("max_payload_bytes must be between 64 and " + std::to_string(kMaxPayloadBytesLimit));
  }
  if (options.directory.empty()) return bad("no directory given");
  auto impl = std::make_unique<Impl>(std::move(options));
  QPC_TRY(impl->Open());
  return std::unique_ptr<FileExchanger>(new FileExchanger(std::move(impl)));
}

Result<EndpointInfo> FileExchanger::Exchange(const EndpointInfo& local,
                                             std::chrono::milliseconds deadline) {
  return impl_->Exchange(local, Clock::now() + deadline);
}

Result<void> FileExchanger::Barrier(std::string_view stage, std::chrono::milliseconds deadline) {
  return impl_->Barrier(stage, Clock::now() + deadline);
}

void FileExchanger::Abort(std::string_view reason, std::chrono::milliseconds deadline) {
  (void)deadline;  // one atomic file write; not a wait
  impl_->Abort(reason);
}

std::filesystem::path FileExchanger::PathOf(std::string_view role, std::string_view kind) const {
  return impl_->PathOf(role, kind);
}

}  // namespace qpconnect::oob
