// SPDX-License-Identifier: MIT
// What this library does not offer (docs/rdmacm.md, "Not supported"): each
// fails at once with ENOSYS and one log line naming it, never a crash or a
// hang. rsockets (implemented inside librdmacm) are not offered, but rpoll and
// rselect, which librdmacm's example programs import (BIND_NOW: they must
// resolve), pass through to poll/select: with no rsocket, every fd is an
// ordinary one. rsockets' epoll (RDMACM_1.5's repoll_*) is rsockets': ENOSYS.
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <sys/select.h>

#include <cerrno>
#include <cstdarg>
#include <string>

#include "log.h"
#include "rdma_cma_newer.h"

namespace {

int NotSupported(const char* what) {
  qpconnect::rdmacm::LogLine(std::string(what) +
                             " is not supported by the qpconnect rdma_cm library (ENOSYS); "
                             "see docs/rdmacm.md");
  errno = ENOSYS;
  return -1;
}

}  // namespace

extern "C" {

int rpoll(pollfd* fds, nfds_t nfds, int timeout) { return poll(fds, nfds, timeout); }
int rselect(int nfds, fd_set* r, fd_set* w, fd_set* e, timeval* timeout) {
  return select(nfds, r, w, e, timeout);
}

int rsocket(int, int, int) { return NotSupported("rsocket (rsockets)"); }
int rbind(int, const sockaddr*, socklen_t) { return NotSupported("rbind (rsockets)"); }
int rlisten(int, int) { return NotSupported("rlisten (rsockets)"); }
int raccept(int, sockaddr*, socklen_t*) { return NotSupported("raccept (rsockets)"); }
int rconnect(int, const sockaddr*, socklen_t) { return NotSupported("rconnect (rsockets)"); }
int rshutdown(int, int) { return NotSupported("rshutdown (rsockets)"); }
int rclose(int) { return NotSupported("rclose (rsockets)"); }
ssize_t rrecv(int, void*, size_t, int) { return NotSupported("rrecv (rsockets)"); }
ssize_t rrecvfrom(int, void*, size_t, int, sockaddr*, socklen_t*) {
  return NotSupported("rrecvfrom (rsockets)");
}
ssize_t rrecvmsg(int, msghdr*, int) { return NotSupported("rrecvmsg (rsockets)"); }
ssize_t rsend(int, const void*, size_t, int) { return NotSupported("rsend (rsockets)"); }
ssize_t rsendto(int, const void*, size_t, int, const sockaddr*, socklen_t) {
  return NotSupported("rsendto (rsockets)");
}
ssize_t rsendmsg(int, const msghdr*, int) { return NotSupported("rsendmsg (rsockets)"); }
ssize_t rread(int, void*, size_t) { return NotSupported("rread (rsockets)"); }
ssize_t rreadv(int, const iovec*, int) { return NotSupported("rreadv (rsockets)"); }
ssize_t rwrite(int, const void*, size_t) { return NotSupported("rwrite (rsockets)"); }
ssize_t rwritev(int, const iovec*, int) { return NotSupported("rwritev (rsockets)"); }
int rgetpeername(int, sockaddr*, socklen_t*) { return NotSupported("rgetpeername (rsockets)"); }
int rgetsockname(int, sockaddr*, socklen_t*) { return NotSupported("rgetsockname (rsockets)"); }
int rsetsockopt(int, int, int, const void*, socklen_t) {
  return NotSupported("rsetsockopt (rsockets)");
}
int rgetsockopt(int, int, int, void*, socklen_t*) { return NotSupported("rgetsockopt (rsockets)"); }
int rfcntl(int, int, ...) { return NotSupported("rfcntl (rsockets)"); }
off_t riomap(int, void*, size_t, int, int, off_t) { return NotSupported("riomap (rsockets)"); }
int riounmap(int, void*, size_t) { return NotSupported("riounmap (rsockets)"); }
size_t riowrite(int, const void*, size_t, off_t, int) {
  NotSupported("riowrite (rsockets)");
  return 0;
}
int repoll_create(int) { return NotSupported("repoll_create (rsockets)"); }
int repoll_ctl(int, int, int, epoll_event*) { return NotSupported("repoll_ctl (rsockets)"); }
int repoll_wait(int, epoll_event*, int, int) { return NotSupported("repoll_wait (rsockets)"); }

}  // extern "C"
