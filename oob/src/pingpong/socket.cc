// The pingpong dialect's TCP steps (qpconnect/oob/pingpong.h): plain POSIX
// sockets in non-blocking mode, every wait a poll() bounded by the caller's
// deadline.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "qpconnect/oob/pingpong.h"

namespace qpconnect::oob {
namespace {

using Clock = PingpongClock;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Result<void> SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return ErrnoError(ErrorCode::kIo, errno, "fcntl O_NONBLOCK");
  }
  return Ok();
}

// Milliseconds left until `deadline`, at least 0, for poll().
int MillisLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1000000 ? 1000000 : static_cast<int>(left.count());
}

// Waits until `fd` is ready for `events`. kTimeout with `what` if the deadline
// passes first.
Result<void> WaitFor(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return Ok();
    if (n == 0) return Error{ErrorCode::kTimeout, 0, what, "", "the deadline passed"};
    if (errno != EINTR) return ErrnoError(ErrorCode::kIo, errno, "poll (" + what + ")");
  }
}

std::string AddressText(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

// Reads exactly `n` bytes. A peer that closes early is kProtocol; a deadline
// that passes is kTimeout; both say how many bytes had arrived.
Result<std::string> ReadExact(int fd, size_t n, Clock::time_point deadline,
                              const std::string& what) {
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, buf.data() + got, n - got);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) {
      return Error{ErrorCode::kProtocol, 0, what, "length",
                   "the peer closed the connection after " + std::to_string(got) + " of " +
                       std::to_string(n) + " bytes"};
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoError(ErrorCode::kIo, errno, what);
    auto w = WaitFor(fd, POLLIN, deadline, what);
    if (!w) {
      Error e = std::move(w).error();
      if (e.code == ErrorCode::kTimeout) {
        e.detail = "the deadline passed with " + std::to_string(got) + " of " + std::to_string(n) +
                   " bytes received";
        if (got > 0 && got != n) {
          e.detail +=
              " (is the peer a pingpong program? perftest and qp-connect --wire qpc "
              "speak other formats)";
        }
      }
      return e;
    }
  }
  return buf;
}

Result<void> WriteAll(int fd, std::string_view data, Clock::time_point deadline,
                      const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (w > 0) {
      done += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      QPC_TRY(WaitFor(fd, POLLOUT, deadline, what));
      continue;
    }
    return ErrnoError(
        ErrorCode::kIo, errno, what,
        errno == EPIPE || errno == ECONNRESET ? "the peer closed the connection" : "");
  }
  return Ok();
}

struct AddrInfoFree {
  void operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }
};
using UniqueAddrInfo = std::unique_ptr<addrinfo, AddrInfoFree>;

Result<UniqueAddrInfo> Resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(h.empty() ? nullptr : h.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    return Error{ErrorCode::kNotFound, 0, "resolve " + (h.empty() ? "*" : h) + ":" + service, "",
                 ::gai_strerror(rc)};
  }
  return UniqueAddrInfo(res);
}

}  // namespace

// ---- server ----

Result<std::unique_ptr<PingpongServer>> PingpongServer::Create(
    const PingpongServerOptions& options) {
  auto ai = Resolve(options.bind_address, options.port, true);
  if (!ai) return std::move(ai).error();
  std::unique_ptr<PingpongServer> s(new PingpongServer());
  Error last{ErrorCode::kIo, 0, "listen on port " + std::to_string(options.port), "",
             "no usable address"};
  // Prefer IPv6 (dual-stack) where available, then the order getaddrinfo gave.
  for (int pass = 0; pass < 2 && s->listen_fd_ < 0; ++pass) {
    for (addrinfo* a = ai->get(); a != nullptr; a = a->ai_next) {
      if ((pass == 0) != (a->ai_family == AF_INET6)) continue;
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        last = ErrnoError(ErrorCode::kIo, errno, "socket");
        continue;
      }
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (a->ai_family == AF_INET6) {
        int zero = 0;
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      }
      if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1) != 0) {
        last = ErrnoError(ErrorCode::kIo, errno, "bind/listen " + AddressText(a->ai_addr));
        ::close(fd);
        continue;
      }
      s->listen_fd_ = fd;
      break;
    }
  }
  if (s->listen_fd_ < 0) return last;
  QPC_TRY(SetNonBlocking(s->listen_fd_));
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  s->port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return s;
}

PingpongServer::~PingpongServer() {
  CloseFd(conn_fd_);
  CloseFd(listen_fd_);
}

Result<PingpongRecord> PingpongServer::AcceptAndReadPeer(Clock::time_point deadline) {
  const std::string what = "accept a pingpong client on port " + std::to_string(port_);
  while (conn_fd_ < 0) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      conn_fd_ = fd;
      peer_ = AddressText(reinterpret_cast<sockaddr*>(&ss));
      break;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoError(ErrorCode::kIo, errno, what);
    auto w = WaitFor(listen_fd_, POLLIN, deadline, what);
    if (!w) {
      Error e = std::move(w).error();
      if (e.code == ErrorCode::kTimeout) e.detail = "no client connected before the deadline";
      return e;
    }
  }
  CloseFd(listen_fd_);  // one client, as the stock server
  QPC_TRY(SetNonBlocking(conn_fd_));
  auto rec = ReadExact(conn_fd_, kPingpongRecordBytes, deadline,
                       "read the client's pingpong record from " + peer_);
  if (!rec) return std::move(rec).error();
  return DecodePingpongRecord(*rec);
}

Result<void> PingpongServer::SendOwn(const PingpongRecord& own, Clock::time_point deadline) {
  if (conn_fd_ < 0) return Error{ErrorCode::kInvalidArgument, 0, "pingpong send", "", "no client"};
  return WriteAll(conn_fd_, EncodePingpongRecord(own), deadline,
                  "write our pingpong record to " + peer_);
}

Result<void> PingpongServer::ReadDone(Clock::time_point deadline) {
  if (conn_fd_ < 0) return Error{ErrorCode::kInvalidArgument, 0, "pingpong done", "", "no client"};
  auto d = ReadExact(conn_fd_, kPingpongDoneBytes, deadline, "read \"done\" from " + peer_);
  if (!d) return std::move(d).error();
  if (*d != std::string_view("done\0", kPingpongDoneBytes)) {
    return Error{ErrorCode::kProtocol, 0, "read \"done\" from " + peer_, "done",
                 "the client sent 5 bytes that are not \"done\\0\""};
  }
  CloseFd(conn_fd_);
  return Ok();
}

// ---- client ----

Result<std::unique_ptr<PingpongClient>> PingpongClient::Create(
    const PingpongClientOptions& options) {
  if (options.host.empty()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong client", "host", "empty host"};
  }
  if (options.retry_interval.count() < 0) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong client", "retry_interval", "negative"};
  }
  return std::unique_ptr<PingpongClient>(new PingpongClient(options));
}

PingpongClient::~PingpongClient() { CloseFd(fd_); }

Result<void> PingpongClient::Connect(Clock::time_point deadline) {
  const std::string target = options_.host + ":" + std::to_string(options_.port);
  auto ai = Resolve(options_.host, options_.port, false);
  if (!ai) return std::move(ai).error();
  int attempts = 0;
  for (;;) {
    ++attempts;
    Error last{ErrorCode::kIo, 0, "connect " + target, "", "no address"};
    bool refused = false;
    for (addrinfo* a = ai->get(); a != nullptr; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (auto nb = SetNonBlocking(fd); !nb) {
        ::close(fd);
        return nb;
      }
      int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      int err = rc == 0 ? 0 : errno;
      if (err == EINPROGRESS) {
        auto w = WaitFor(fd, POLLOUT, deadline, "connect " + target);
        if (!w) {
          ::close(fd);
          return std::move(w).error();
        }
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
      if (err == 0) {
        fd_ = fd;
        return Ok();
      }
      ::close(fd);
      refused = refused || err == ECONNREFUSED;
      last = ErrnoError(ErrorCode::kIo, err, "connect " + AddressText(a->ai_addr));
    }
    if (!refused || options_.retry_interval.count() == 0 ||
        Clock::now() + options_.retry_interval >= deadline) {
      if (refused && attempts > 1) {
        last.detail = "still refused after " + std::to_string(attempts) +
                      " attempts: is the server (ibv_*_pingpong without HOST) running?";
      }
      return last;
    }
    std::this_thread::sleep_for(options_.retry_interval);
  }
}

Result<void> PingpongClient::SendOwn(const PingpongRecord& own, Clock::time_point deadline) {
  if (fd_ < 0) return Error{ErrorCode::kInvalidArgument, 0, "pingpong send", "", "not connected"};
  return WriteAll(fd_, EncodePingpongRecord(own), deadline, "write our pingpong record");
}

Result<PingpongRecord> PingpongClient::ReadPeer(Clock::time_point deadline) {
  if (fd_ < 0) return Error{ErrorCode::kInvalidArgument, 0, "pingpong read", "", "not connected"};
  auto rec = ReadExact(fd_, kPingpongRecordBytes, deadline, "read the server's pingpong record");
  if (!rec) return std::move(rec).error();
  return DecodePingpongRecord(*rec);
}

Result<void> PingpongClient::SendDone(Clock::time_point deadline) {
  if (fd_ < 0) return Error{ErrorCode::kInvalidArgument, 0, "pingpong done", "", "not connected"};
  QPC_TRY(
      WriteAll(fd_, std::string_view("done\0", kPingpongDoneBytes), deadline, "write \"done\""));
  CloseFd(fd_);
  return Ok();
}

}  // namespace qpconnect::oob
