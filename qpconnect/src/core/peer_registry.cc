// SPDX-License-Identifier: MIT
// The writer of a process's published-peers file (qpconnect/peer_registry.h);
// the file's place, lines and reader are peers_file.cc.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "qpconnect/log.h"
#include "qpconnect/peer_registry.h"

namespace qpconnect {
namespace {

bool Disabled(const char* value) {
  if (value == nullptr) return false;
  const std::string v = value;
  return v == "0" || v == "off" || v == "no" || v == "false";
}

std::atomic<bool> g_process_started{false};

}  // namespace

PeerRegistry::PeerRegistry(Options options) : options_(std::move(options)) {}

PeerRegistry::~PeerRegistry() { Close(); }

PeerRegistry& PeerRegistry::Process() {
  static PeerRegistry* registry = [] {
    Options o;
    o.enabled = !Disabled(std::getenv(kPublishPeersEnv));
    o.pid = static_cast<int>(::getpid());
    o.start_time = ProcessStartTime(o.pid).value_or(0);
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) o.host = host;
    auto* r = new PeerRegistry(std::move(o));  // never freed: QPs outlive static destructors
    r->process_ = true;
    std::atexit([] { PeerRegistry::Process().Close(); });
    g_process_started = true;
    return r;
  }();
  return *registry;
}

bool PeerRegistry::ProcessStarted() { return g_process_started.load(std::memory_order_relaxed); }

void PeerRegistry::ResetAfterFork() {
  // The child's file is its own; the parent's entries and descriptor stay
  // the parent's.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  path_.clear();
  lines_ = 0;
  live_.clear();
  options_.pid = static_cast<int>(::getpid());
  options_.start_time = ProcessStartTime(options_.pid).value_or(0);
}

void PeerRegistry::Fail(const std::string& what, int err) {
  if (failed_) return;
  failed_ = true;
  Log(LogLevel::kWarning, "publishing connected peers for qp-inspect stopped: " + what +
                              (err != 0 ? std::string(": ") + std::strerror(err) : "") +
                              " (connections are not affected; " + kPublishPeersEnv +
                              "=0 turns publishing off)");
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!path_.empty()) ::unlink(path_.c_str());
}

bool PeerRegistry::Rewrite() {
  const std::string tmp = path_ + ".tmp";
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Fail("cannot create " + tmp, errno), false;
  std::string text = PeersHeaderLine(options_.pid, options_.start_time, options_.host);
  for (const auto& [key, p] : live_) text += PeerUpLine(p);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Fail("cannot write " + tmp, e), false;
    }
    done += static_cast<size_t>(n);
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return Fail("cannot rename " + tmp, e), false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;  // the renamed file: later events append to it
  lines_ = live_.size();
  return true;
}

// The files in `dir` of processes that are gone (no /proc/<pid>, or another
// start time: the pid reused), left by a process that exited without
// destroying its QPs (killed): removed once, when this process's file is
// first made. Only the uid's own files are there (a private directory).
static void SweepStale(const std::string& dir, int self) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const size_t dot = name.find(".jsonl");
    if (dot == 0 || dot == std::string::npos || name.find_first_not_of("0123456789") != dot) {
      continue;
    }
    const int pid = std::atoi(name.substr(0, dot).c_str());
    if (pid <= 0 || pid == self) continue;
    const std::string path = dir + "/" + name;
    const auto live = ProcessStartTime(pid);
    bool stale = !live;
    if (!stale) {
      std::ifstream f(path);
      std::string header;
      std::getline(f, header);
      PeersFileContents c = ParsePeersFile(header + "\n");
      stale = c.valid && c.start_time != *live;
    }
    if (stale) ::unlink(path.c_str());
  }
  ::closedir(d);
}

bool PeerRegistry::EnsureOpen() {
  if (fd_ >= 0) return true;
  if (path_.empty()) {
    std::string dir = options_.dir;
    std::string why;
    if (dir.empty()) dir = PeersDir(::getuid(), true, &why);
    if (dir.empty()) return Fail(why, 0), false;
    ::mkdir(dir.c_str(), 0700);
    path_ = PeersFile(dir, options_.pid);
    SweepStale(dir, options_.pid);
  }
  return Rewrite();
}

bool PeerRegistry::Append(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("cannot write " + path_, errno), false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void PeerRegistry::Publish(std::span<const PublishedPeer> peers) noexcept {
  try {
    std::lock_guard lock(mu_);
    if (!options_.enabled || failed_ || peers.empty()) return;
    if (options_.pid != 0 && options_.pid != static_cast<int>(::getpid()) && process_)
      ResetAfterFork();
    std::string text;
    for (const PublishedPeer& p : peers) {
      live_[{p.device, p.qpn}] = p;
      text += PeerUpLine(p);
    }
    if (fd_ < 0) {
      EnsureOpen();  // writes every live entry
      return;
    }
    lines_ += peers.size();
    if (lines_ > 2 * live_.size() + 64) {
      Rewrite();
    } else {
      Append(text);
    }
  } catch (...) {
    // Out of memory: the connection stands; nothing more is published.
    failed_ = true;
  }
}

void PeerRegistry::Withdraw(const std::string& device, uint32_t qpn) noexcept {
  try {
    std::lock_guard lock(mu_);
    if (failed_ || live_.empty()) return;
    if (options_.pid != static_cast<int>(::getpid()) && process_) {
      ResetAfterFork();
      return;
    }
    if (live_.erase({device, qpn}) == 0 || fd_ < 0) return;
    if (live_.empty()) {
      ::close(fd_);
      fd_ = -1;
      ::unlink(path_.c_str());
      lines_ = 0;
      return;
    }
    ++lines_;
    if (lines_ > 2 * live_.size() + 64) {
      Rewrite();
    } else {
      Append(PeerDownLine(device, qpn));
    }
  } catch (...) {
    failed_ = true;
  }
}

void PeerRegistry::Close() noexcept {
  std::lock_guard lock(mu_);
  if (options_.pid != static_cast<int>(::getpid()) && process_) return;  // the parent's
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(path_.c_str());
  }
  lines_ = 0;
  live_.clear();
}

size_t PeerRegistry::live() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

bool PeerRegistry::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

std::string PeerRegistry::path() const {
  std::lock_guard lock(mu_);
  return path_;
}

}  // namespace qpconnect
