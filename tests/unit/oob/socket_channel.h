// SPDX-License-Identifier: MIT
// A stream socket as a blocking ByteChannel (channel.h), for the channel and
// cancel tests: each call waits with poll() up to its deadline.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <string>
#include <string_view>

#include "qpconnect/oob/channel.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

inline Error MakeError(ErrorCode code, std::string operation, std::string detail = {}) {
  Error e;
  e.code = code;
  e.operation = std::move(operation);
  e.detail = std::move(detail);
  return e;
}

using Clock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events`; kTimeout at `deadline`. A
// deadline already passed still takes what is ready (PollPeer()).
inline Result<void> WaitFd(int fd, short events, Clock::time_point deadline) {
  for (bool first = true;; first = false) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 && !first) return MakeError(ErrorCode::kTimeout, "poll");
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (rc > 0) return Ok();
    if (rc < 0 && errno != EINTR) return ErrnoError(ErrorCode::kIo, errno, "poll");
  }
}

// One end of a stream socket as a ByteChannel. Blocking: send() returns only
// once every byte is in the socket, however long the peer leaves its buffer
// full, bounded by the deadline. The channel does not own `fd`.
inline ByteChannel SocketChannel(int fd) {
  ByteChannel c;
  c.send = [fd](std::string_view bytes, Clock::time_point deadline) -> Result<void> {
    while (!bytes.empty()) {
      QPC_TRY(WaitFd(fd, POLLOUT, deadline));
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        return ErrnoError(ErrorCode::kIo, errno, "send");
      if (n > 0) bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Ok();
  };
  c.receive = [fd](char* buf, size_t max, Clock::time_point deadline) -> Result<size_t> {
    for (;;) {
      QPC_TRY(WaitFd(fd, POLLIN, deadline));
      const ssize_t n = ::recv(fd, buf, max, MSG_DONTWAIT);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EAGAIN && errno != EINTR) return ErrnoError(ErrorCode::kIo, errno, "recv");
    }
  };
  return c;
}

}  // namespace qpconnect::oob
