// SPDX-License-Identifier: MIT
#include "qpconnect/oob/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "driver.h"
#include "transport.h"

namespace qpconnect::oob {

using Clock = std::chrono::steady_clock;
using internal::MakeError;
using internal::MsText;

namespace {

bool ValidName(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
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

// A transport of the protocol driver: each message is a file named after its
// kind (S.R.hello, S.R.confirm, S.R.qpc, S.R.barrier-N, S.R.abort), written
// atomically and acknowledged by the reader deleting it. The directory may
// hold an earlier run's files, so the driver runs in mailbox mode, and
// Receive() passes over a peer file bound to another run's nonce (noting it
// for the timeout) and over one still being written. Each side holds an
// exclusive flock on S.R.lock while its exchanger lives: the peer's lock,
// once seen held, going free (or away) means the peer is gone.
class FileExchanger::Impl final : public internal::FramePort, public internal::Transport {
 public:
  explicit Impl(FileOptions o) : Transport(*this, DriverOptionsOf(o)), o_(std::move(o)) {}
  ~Impl() override { RemoveOwnFiles(aborted_); }

  Result<void> OpenDirectory();

  // Transport: the driver's calls, and this side's files removed after a
  // failure this side caused (an abort a Cancel() wrote stays for the peer).
  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline) override;
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline) override;
  Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                      Clock::time_point deadline) override;
  // Removes this side's files; with `keep_abort`, not its abort file; with
  // `keep_lock`, not the lock file this side holds.
  void RemoveOwnFiles(bool keep_abort = false, bool keep_lock = false);
  bool aborted() const { return aborted_; }

  std::string Name(std::string_view role, std::string_view kind) const {
    return o_.session + "." + std::string(role) + "." + std::string(kind);
  }
  std::filesystem::path PathOf(std::string_view role, std::string_view kind) const {
    return o_.directory / Name(role, kind);
  }

  // FramePort.
  std::string Name() const override { return "file " + PathOf(o_.peer_role, "*").string(); }
  Result<void> Open(const internal::Step& step) override;
  Result<void> Send(const internal::Step& step, std::string_view bytes) override;
  Result<Frame> Receive(const internal::Step& step) override;
  Result<std::optional<Frame>> Settle(const internal::Step& step) override;
  Result<std::optional<Frame>> Poll(const internal::Step& step) override;

 private:
  // Both sides write first (a file write never waits for the peer); the
  // hello may be stale, so the driver runs in mailbox mode.
  static internal::DriverOptions DriverOptionsOf(FileOptions& o) {
    internal::DriverOptions d = internal::SharedDriverOptions(o);
    d.order = SendOrder::kBothFirst;
    d.mailbox = true;
    return d;
  }
  // The file kind of a message: "hello", "confirm", "qpc", "barrier-N",
  // "abort".
  static std::string KindOf(const internal::Step& step);
  const Nonce& my_nonce() const { return driver().handshake().my_nonce(); }
  // A note on the peer's file of `kind` when it is bound to another run's
  // nonce; empty otherwise.
  std::string StaleNote(std::string_view kind, const internal::Binding& b) const;
  // The note for the peer's description, if it is stale (read afresh).
  std::string StaleDescriptionNote();
  Error Timeout(const internal::Step& step, const std::string& stale,
                const std::string& incomplete) const;

  Result<void> WriteOwn(std::string_view kind, std::string_view bytes);
  void RemoveOwn(std::string_view kind);
  // The peer's file of `kind`: nullopt when absent, or when it is not all
  // there yet (a writer that does not publish by rename, a copy in
  // progress): then `incomplete`, if given, says how much is there. Files
  // are capped at a frame of `max_payload` bytes.
  Result<std::optional<PeerFile>> ReadPeer(std::string_view kind, uint32_t max_payload,
                                           std::string* incomplete = nullptr);
  // Removes the peer's file of `kind` if it is still the one that was read.
  void Consume(std::string_view kind, const PeerFile& f);
  bool OwnExists(std::string_view kind);
  // The peer's abort file, if it is bound to this session (it is consumed).
  Result<std::optional<Frame>> PeerAbort();
  void StartWatch();
  // Takes S.R.lock (created, flock'ed, then renamed into place, so it is
  // never seen unlocked): kIncompatible when another live process holds it
  // (the same directory, session and role: both sides given one role).
  Result<void> TakeLock();
  // kIo once the peer's lock, seen held earlier in this Exchange() (looked
  // at while waiting and on each message of the peer), is free or gone: the
  // peer exited or was killed. A lock never seen held (an earlier run's, or
  // none yet) says nothing.
  Result<void> CheckPeerAlive();
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
  bool aborted_ = false;  // S.R.abort written and left for the peer
  Fd dir_;
  Fd inotify_;
  Fd lock_;  // holds the flock on S.R.lock
  // The peer's lock file as last seen held (device, inode), if it was.
  std::optional<std::pair<dev_t, ino_t>> peer_lock_;
  std::string last_sent_;  // kind of the last message written
  PeerFile last_read_;     // the peer's file Receive() returned last
};

Result<void> FileExchanger::Impl::OpenDirectory() {
  const int fd = ::open(o_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return ErrnoError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, err,
                      "open exchange directory " + o_.directory.string());
  }
  dir_ = Fd(fd);
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
  // A stop (Cancel(), the interrupt flag) ends the wait as the deadline
  // would, within poll_interval.
  if (now >= deadline || internal::StopRequested()) return false;
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

void FileExchanger::Impl::RemoveOwnFiles(bool keep_abort, bool keep_lock) {
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
  const std::string lock = Name(o_.role, "lock");
  for (const auto& n : doomed) {
    if (keep_abort && n == abort) continue;
    if (keep_lock && n == lock) continue;
    ::unlinkat(dir_.get(), n.c_str(), 0);
  }
  if (!keep_abort) aborted_ = false;
}

Result<std::optional<PeerFile>> FileExchanger::Impl::ReadPeer(std::string_view kind,
                                                              uint32_t max_payload,
                                                              std::string* incomplete) {
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
      static_cast<off_t>(kFrameHeaderBytes + uint64_t{max_payload} + kFrameMacBytes);
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
  // Not all there yet (a copy in progress, or the file grew while read): as
  // if absent, until the deadline.
  auto size = PeekFrameSize(bytes, max_payload);
  if (!size) return FileError(std::move(size).error(), o_.peer_role, kind);
  if (*size == 0 || bytes.size() < *size || got > static_cast<size_t>(st.st_size)) {
    if (incomplete != nullptr) {
      *incomplete =
          PathOf(o_.peer_role, kind).string() + " was incomplete (" + std::to_string(got) + " of " +
          (*size == 0 ? "at least " + std::to_string(kFrameHeaderBytes) : std::to_string(*size)) +
          " bytes): still being written?";
    }
    return std::optional<PeerFile>();
  }
  auto frame = DecodeFrame(bytes, max_payload);
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

Result<std::optional<Frame>> FileExchanger::Impl::PeerAbort() {
  auto f = ReadPeer("abort", internal::kSmallFramePayloadBytes);
  if (!f) return std::move(f).error();
  if (!*f) return std::optional<Frame>();
  auto b = internal::PeekBinding(f->value().frame);
  if (f->value().frame.type != FrameType::kAbort || !b || b->receiver != my_nonce()) {
    return std::optional<Frame>();  // another session's: not ours to act on
  }
  Consume("abort", f->value());  // read: the peer's side may go now
  return std::optional<Frame>(std::move(f->value().frame));
}

std::string FileExchanger::Impl::KindOf(const internal::Step& step) {
  switch (step.type) {
    case FrameType::kHello:
      return "hello";
    case FrameType::kEndpoint:
      return "qpc";
    case FrameType::kBarrier:
      return "barrier-" + std::to_string(step.seq);
    case FrameType::kAbort:
      return "abort";
    case FrameType::kConfirm:
      return "confirm";
    case FrameType::kStream:  // never a file's
      break;
  }
  return "unknown";
}

std::string FileExchanger::Impl::StaleNote(std::string_view kind,
                                           const internal::Binding& b) const {
  return PathOf(o_.peer_role, kind).string() + " is bound to nonce " +
         internal::NonceHex(b.receiver) + ", not this run's " + internal::NonceHex(my_nonce()) +
         (driver().handshake().has_psk() ? ": replayed or stale (from another session), refused"
                                         : ": stale (left by an earlier run), refused");
}

std::string FileExchanger::Impl::StaleDescriptionNote() {
  auto f = ReadPeer(
      driver().handshake().has_psk() ? "confirm" : "qpc",
      driver().handshake().has_psk() ? internal::kSmallFramePayloadBytes : o_.max_payload_bytes);
  if (!f || !*f) return {};
  auto b = internal::PeekBinding(f->value().frame);
  return b && b->receiver != my_nonce()
             ? StaleNote(driver().handshake().has_psk() ? "confirm" : "qpc", *b)
             : std::string();
}

Error FileExchanger::Impl::Timeout(const internal::Step& step, const std::string& stale,
                                   const std::string& incomplete) const {
  const std::string kind = KindOf(step);
  std::string detail = step.type == FrameType::kHello      ? "no hello from the peer ("
                       : step.type == FrameType::kConfirm  ? "no key confirmation from the peer ("
                       : step.type == FrameType::kEndpoint ? "no description from the peer ("
                                                           : "no marker from the peer (";
  detail += PathOf(o_.peer_role, kind).string() + ") within " + MsText(step.total);
  if (!incomplete.empty()) detail += "; " + incomplete;
  if (!stale.empty()) detail += "; " + stale;
  // With a PSK, a refused message from another session is a replay: kAuth.
  const bool exchange = step.type != FrameType::kBarrier;
  const bool replay = exchange && !stale.empty() && driver().handshake().has_psk();
  return MakeError(
      replay ? ErrorCode::kAuth : ErrorCode::kTimeout,
      std::string(exchange ? "file exchange" : "file barrier") + " in " + o_.directory.string(),
      detail);
}

Result<void> FileExchanger::Impl::TakeLock() {
  const std::string name = Name(o_.role, "lock");
  // Ours already (an earlier Exchange() of this exchanger)?
  struct stat held {};
  struct stat there {};
  if (lock_.get() >= 0 && ::fstat(lock_.get(), &held) == 0 &&
      ::fstatat(dir_.get(), name.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
      held.st_dev == there.st_dev && held.st_ino == there.st_ino) {
    return Ok();
  }
  lock_.Reset();
  // Someone else's, held: another live process has this role.
  Fd other(::openat(dir_.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (other.get() >= 0) {
    if (::flock(other.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      return MakeError(ErrorCode::kIncompatible, "file exchange in " + o_.directory.string(),
                       "another live process holds " + PathOf(o_.role, "lock").string() +
                           ": it uses the same session '" + o_.session + "' and role '" + o_.role +
                           "' (were both sides given the same role? the peer's role is '" +
                           o_.peer_role + "')",
                       "role");
    }
    ::flock(other.get(), LOCK_UN);
  }
  auto nonce = RandomNonce();
  if (!nonce) return std::move(nonce).error();
  const std::string tmp = "." + name + ".tmp." + internal::NonceHex(*nonce).substr(0, 12);
  Fd fd(
      ::openat(dir_.get(), tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) {
    return ErrnoError(ErrorCode::kIo, errno,
                      "create lock file " + PathOf(o_.role, "lock").string());
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 ||
      ::renameat(dir_.get(), tmp.c_str(), dir_.get(), name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir_.get(), tmp.c_str(), 0);
    return ErrnoError(ErrorCode::kIo, err, "lock " + PathOf(o_.role, "lock").string());
  }
  lock_ = std::move(fd);
  return Ok();
}

Result<void> FileExchanger::Impl::CheckPeerAlive() {
  const std::string name = Name(o_.peer_role, "lock");
  Fd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  const bool there = fd.get() >= 0 && ::fstat(fd.get(), &st) == 0;
  bool held = false;
  if (there) {
    held = ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!held) ::flock(fd.get(), LOCK_UN);
  }
  const auto id = std::make_pair(st.st_dev, st.st_ino);
  if (held && (!peer_lock_ || *peer_lock_ == id)) {
    peer_lock_ = id;
    return Ok();
  }
  if (!peer_lock_) return Ok();  // never seen held: not there yet, or an earlier run's
  return MakeError(ErrorCode::kIo, "file exchange in " + o_.directory.string(),
                   "the peer went away: " + PathOf(o_.peer_role, "lock").string() +
                       (!there ? " was removed"
                        : held ? " was replaced by another process's"
                               : " is no longer locked") +
                       " (the peer's process exited or was killed)");
}

Result<void> FileExchanger::Impl::Open(const internal::Step& step) {
  (void)step;
  StartWatch();
  QPC_TRY(TakeLock());
  RemoveOwnFiles(/*keep_abort=*/false, /*keep_lock=*/true);
  last_sent_.clear();
  peer_lock_.reset();
  return Ok();
}

Result<std::optional<Frame>> FileExchanger::Impl::Poll(const internal::Step& step) {
  (void)step;
  auto abort = PeerAbort();
  if (!abort || *abort) return abort;
  auto alive = CheckPeerAlive();
  if (alive) return std::optional<Frame>();
  abort = PeerAbort();  // an abort written just before it exited explains more
  if (!abort || *abort) return abort;
  return std::move(alive).error();
}

Result<void> FileExchanger::Impl::Send(const internal::Step& step, std::string_view bytes) {
  const std::string kind = KindOf(step);
  QPC_TRY(WriteOwn(kind, bytes));  // one atomic write: never waits for the peer
  if (step.type == FrameType::kAbort) {
    aborted_ = true;
  } else {
    last_sent_ = kind;
  }
  return Ok();
}

Result<Frame> FileExchanger::Impl::Receive(const internal::Step& step) {
  const std::string kind = KindOf(step);
  std::string stale;       // the last stale file refused, for the timeout message
  std::string incomplete;  // the last file not all there yet, likewise
  for (;;) {
    incomplete.clear();
    auto got = ReadPeer(kind, step.max_payload, &incomplete);
    if (!got) return step.WithCapNote(std::move(got).error());
    if (*got) {
      auto b = internal::PeekBinding(got->value().frame);
      if (step.type != FrameType::kHello && b && b->receiver != my_nonce()) {
        stale = StaleNote(kind, *b);  // an earlier run's: never used, the wait goes on
      } else {
        Frame frame = std::move(got->value().frame);
        last_read_ = std::move(got->value());  // its identity, for Settle()
        // The peer of this session wrote it: its lock, held now, is the one
        // to watch. A peer whose messages were always there before we looked
        // would otherwise never be seen holding it (no Poll() ran), and its
        // death would go unnoticed until the deadline. (A lock not held now
        // says nothing: files copied by hand come with none.)
        if (step.type != FrameType::kHello) (void)CheckPeerAlive();
        return frame;
      }
    }
    auto polled = Poll(step);  // the peer's abort, or the peer gone
    if (!polled) return std::move(polled).error();
    if (*polled) return std::move(**polled);
    if (!Wait(step.deadline)) {
      if (step.type == FrameType::kHello && stale.empty()) stale = StaleDescriptionNote();
      return Timeout(step, stale, incomplete);
    }
  }
}

Result<std::optional<Frame>> FileExchanger::Impl::Settle(const internal::Step& step) {
  const std::string kind = KindOf(step);
  Consume(kind, last_read_);  // deleting the peer's file is the acknowledgement
  if (step.type == FrameType::kEndpoint) {
    RemoveOwn("hello");  // the peer has read them
    RemoveOwn("confirm");
  }
  for (;;) {
    if (!OwnExists(last_sent_)) return std::optional<Frame>();
    auto polled = Poll(step);  // the peer's abort, or the peer gone
    if (!polled) {
      if (!OwnExists(last_sent_)) return std::optional<Frame>();  // it took ours, then left
      return std::move(polled).error();
    }
    if (*polled) return polled;
    if (!Wait(step.deadline)) {
      return MakeError(
          ErrorCode::kTimeout,
          std::string(step.type == FrameType::kBarrier ? "file barrier" : "file exchange") +
              " in " + o_.directory.string(),
          std::string("the peer did not pick up our ") +
              (step.type == FrameType::kBarrier ? "marker " : "description ") +
              PathOf(o_.role, last_sent_).string() + " within " + MsText(step.total));
    }
  }
}

Result<EndpointInfo> FileExchanger::Impl::Exchange(const EndpointInfo& local,
                                                   Clock::time_point deadline) {
  auto result = driver().Exchange(*this, local, deadline);
  if (!result) {
    const ErrorCode code = result.error().code;
    // An abort a Cancel() wrote stays for the peer.
    if (!PeerCaused(code) && code != ErrorCode::kInvalidArgument) RemoveOwnFiles(aborted_);
    return result;
  }
  RemoveOwn("hello");
  RemoveOwn("confirm");
  return result;
}

Result<void> FileExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  const std::string sent_before = last_sent_;
  auto result = driver().Barrier(*this, stage, deadline);
  if (!result && !PeerCaused(result.error().code) && last_sent_ != sent_before) {
    RemoveOwn(last_sent_);
  }
  return result;
}

Result<std::string> FileExchanger::Impl::BarrierWithNote(std::string_view stage,
                                                         std::string_view note,
                                                         Clock::time_point deadline) {
  const std::string sent_before = last_sent_;
  auto result = driver().BarrierWithNote(*this, stage, note, deadline);
  if (!result && !PeerCaused(result.error().code) && last_sent_ != sent_before) {
    RemoveOwn(last_sent_);
  }
  return result;
}

FileExchanger::FileExchanger(std::unique_ptr<Impl> impl) : ProtocolExchanger(std::move(impl)) {}

const FileExchanger::Impl& FileExchanger::impl() const {
  return static_cast<const Impl&>(transport());
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
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "file exchanger options"));
  if (options.directory.empty()) return bad("no directory given");
  auto impl = std::make_unique<Impl>(std::move(options));
  QPC_TRY(impl->OpenDirectory());
  return std::unique_ptr<FileExchanger>(new FileExchanger(std::move(impl)));
}

std::filesystem::path FileExchanger::PathOf(std::string_view role, std::string_view kind) const {
  return impl().PathOf(role, kind);
}

}  // namespace qpconnect::oob
