// SPDX-License-Identifier: MIT
// A qpc_channel (the C API's byte channel) over one end of a socketpair, with
// injectable faults; shared by the C API's unit and lab tests.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "qpconnect/qpconnect.h"

namespace qpconnect::testing {

struct FdChannel {
  int fd = -1;
  int send_result = 0;        // non-zero: send returns this instead of sending
  ssize_t receive_extra = 0;  // added to what receive reports (a lying callback)
  int max_timeout_seen = -1;  // largest timeout_ms handed to a callback
};

inline int FdSend(void* user, const void* buf, size_t len, int timeout_ms) {
  auto* c = static_cast<FdChannel*>(user);
  c->max_timeout_seen = std::max(c->max_timeout_seen, timeout_ms);
  if (c->send_result != 0) return c->send_result;
  const auto* p = static_cast<const char*>(buf);
  while (len > 0) {
    pollfd pfd{c->fd, POLLOUT, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready == 0) return ETIMEDOUT;
    if (ready < 0) return errno;
    const ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return errno;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

inline ssize_t FdReceive(void* user, void* buf, size_t max, int timeout_ms) {
  auto* c = static_cast<FdChannel*>(user);
  c->max_timeout_seen = std::max(c->max_timeout_seen, timeout_ms);
  pollfd pfd{c->fd, POLLIN, 0};
  const int ready = poll(&pfd, 1, timeout_ms);
  if (ready == 0) return -ETIMEDOUT;
  if (ready < 0) return -errno;
  const ssize_t n = recv(c->fd, buf, max, 0);
  if (n < 0) return -errno;
  return n + c->receive_extra;
}

// The qpc_channel of `c`.
inline qpc_channel ChannelOf(FdChannel& c) { return qpc_channel{FdSend, FdReceive, &c}; }

}  // namespace qpconnect::testing
