// SPDX-License-Identifier: MIT
// Adopted mode from C++: this program creates its own verbs objects (device
// context, PD, CQ, an RC QP, a registered buffer) with plain libibverbs, hands
// the QP and its MR descriptor to qpconnect::Connector to be connected, and
// then runs its own traffic on it: an RDMA WRITE into the peer's buffer
// followed by a SEND, both checked by the receiving side.
//
// The two sides are a parent and its forked child, each on its own device.
// They talk over their OWN channel, a socketpair, given to qpconnect as a
// ByteChannel (two functions) rather than one of qpconnect's transports.
//
//   example_adopted_cpp [DEV0 GID0 DEV1 GID1]
//
// Without arguments the devices and GID indexes come from QPC_DEV0, QPC_GID0,
// QPC_DEV1 and QPC_GID1 (the Soft-RoCE lab sets them: docs/lab.md). A GID of
// -1 lets qpconnect choose. Exits 0 only when both sides checked the data.
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "qpconnect/connector.h"
#include "qpconnect/oob/channel.h"

namespace {

using qpconnect::Error;
using qpconnect::ErrorCode;
using qpconnect::Result;
using Clock = std::chrono::steady_clock;

constexpr size_t kArea = 1024;  // bytes per buffer area
// Buffer areas: what we send, where the peer's SEND lands, where the peer's
// RDMA WRITE lands (the region we publish), and what we write to the peer.
constexpr size_t kSendOff = 0, kRecvOff = kArea, kTargetOff = 2 * kArea, kSourceOff = 3 * kArea;
constexpr size_t kBufferBytes = 4 * kArea;
constexpr std::chrono::milliseconds kTimeout{20000};

struct Side {
  int index = 0;
  std::string device;
  std::optional<uint16_t> gid;
};

char g_tag[64];  // "[side 0 rxe0]" for every line this process prints

void VSay(const char* fmt, va_list ap) {
  std::printf("%s ", g_tag);
  std::vprintf(fmt, ap);
  std::printf("\n");
  std::fflush(stdout);
}

#define QPC_EXAMPLE_PRINTF __attribute__((format(printf, 1, 2)))

QPC_EXAMPLE_PRINTF void Say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VSay(fmt, ap);
  va_end(ap);
}

// Says why, and returns the failing exit status.
QPC_EXAMPLE_PRINTF int Fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VSay(fmt, ap);
  va_end(ap);
  return 1;
}

// Says why, and returns false.
QPC_EXAMPLE_PRINTF bool Bad(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VSay(fmt, ap);
  va_end(ap);
  return false;
}

// ---- the program's own channel: one end of a socketpair ----

qpconnect::oob::ByteChannel SocketChannel(int fd) {
  auto wait = [fd](short events, Clock::time_point deadline) -> Result<void> {
    for (;;) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd, events, 0};
      int r = poll(&p, 1, left < 0 ? 0 : static_cast<int>(left));
      if (r > 0) return qpconnect::Ok();
      if (r == 0) return Error{ErrorCode::kTimeout, 0, "socketpair", "", "timed out"};
      if (errno != EINTR) return qpconnect::ErrnoError(ErrorCode::kIo, errno, "poll");
    }
  };
  qpconnect::oob::ByteChannel ch;
  ch.send = [fd, wait](std::string_view bytes, Clock::time_point deadline) -> Result<void> {
    while (!bytes.empty()) {
      if (auto w = wait(POLLOUT, deadline); !w) return w;
      ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return qpconnect::ErrnoError(ErrorCode::kIo, errno, "send");
      }
      if (n > 0) bytes.remove_prefix(static_cast<size_t>(n));
    }
    return qpconnect::Ok();
  };
  ch.receive = [fd, wait](char* buf, size_t max, Clock::time_point deadline) -> Result<size_t> {
    if (auto w = wait(POLLIN, deadline); !w) return std::move(w).error();
    ssize_t n = recv(fd, buf, max, 0);
    if (n < 0) return qpconnect::ErrnoError(ErrorCode::kIo, errno, "recv");
    return static_cast<size_t>(n);  // 0: the peer closed
  };
  return ch;
}

// ---- the program's own verbs objects, released in reverse order ----

template <typename T, int (*Destroy)(T*)>
struct Deleter {
  void operator()(T* p) const { Destroy(p); }
};
template <typename T, int (*Destroy)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Destroy>>;

struct Verbs {
  Owned<ibv_context, ibv_close_device> ctx;
  Owned<ibv_pd, ibv_dealloc_pd> pd;
  Owned<ibv_cq, ibv_destroy_cq> cq;
  Owned<ibv_qp, ibv_destroy_qp> qp;
  std::unique_ptr<char, decltype(&std::free)> buffer{nullptr, &std::free};
  Owned<ibv_mr, ibv_dereg_mr> mr;
};

bool OpenVerbs(const std::string& device, Verbs& v) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; list != nullptr && i < n; ++i) {
    if (device == ibv_get_device_name(list[i])) v.ctx.reset(ibv_open_device(list[i]));
  }
  if (list != nullptr) ibv_free_device_list(list);
  if (!v.ctx) return Bad("cannot open device %s", device.c_str());
  v.pd.reset(ibv_alloc_pd(v.ctx.get()));
  if (v.pd) v.cq.reset(ibv_create_cq(v.ctx.get(), 16, nullptr, nullptr, 0));
  if (!v.cq) return Bad("ibv_alloc_pd/ibv_create_cq failed: %s", std::strerror(errno));
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = v.cq.get();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = init.cap.max_recv_wr = 4;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  v.qp.reset(ibv_create_qp(v.pd.get(), &init));
  if (!v.qp) return Bad("ibv_create_qp failed: %s", std::strerror(errno));
  v.buffer.reset(static_cast<char*>(std::aligned_alloc(4096, kBufferBytes)));
  std::memset(v.buffer.get(), 0, kBufferBytes);
  v.mr.reset(ibv_reg_mr(v.pd.get(), v.buffer.get(), kBufferBytes,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!v.mr) return Bad("ibv_reg_mr failed: %s", std::strerror(errno));
  return true;
}

bool Post(ibv_qp* qp, const ibv_send_wr& wr) {
  ibv_send_wr copy = wr;
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qp, &copy, &bad);
  if (rc != 0) Say("ibv_post_send failed: %s", std::strerror(rc));
  return rc == 0;
}

// Polls `cq` until `want` completions arrived, each successful.
bool Complete(ibv_cq* cq, int want) {
  const auto deadline = Clock::now() + kTimeout;
  while (want > 0) {
    ibv_wc wc{};
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) return Bad("ibv_poll_cq failed");
    if (n == 0) {
      if (Clock::now() > deadline) return Bad("no completion within the timeout");
      continue;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      return Bad("completion of a %s failed: %s", wc.opcode == IBV_WC_RECV ? "RECV" : "send",
                 ibv_wc_status_str(wc.status));
    }
    --want;
  }
  return true;
}

// One side, start to end. Returns the process's exit status.
int RunSide(const Side& side, int fd) {
  std::snprintf(g_tag, sizeof g_tag, "[side %d %s]", side.index, side.device.c_str());
  Verbs v;
  if (!OpenVerbs(side.device, v)) return 1;
  Say("created my own PD, CQ, RC QP (qpn 0x%x, RESET) and a %zu-byte MR", v.qp->qp_num,
      kBufferBytes);

  // Hand the QP to qpconnect; the peer may RDMA WRITE into our target area.
  qpconnect::AdoptedQp adopted;
  adopted.qp = v.qp.get();
  adopted.mr = qpconnect::MrDescriptor{reinterpret_cast<uint64_t>(v.buffer.get() + kTargetOff),
                                       v.mr->rkey, kArea};
  qpconnect::AdoptOptions ao;
  ao.gid.index = side.gid;
  auto connector = qpconnect::Connector::Adopt({adopted}, ao);
  if (!connector) return Fail("adopt: %s", connector.error().ToString().c_str());
  qpconnect::Connector& c = **connector;
  Say("adopted: the connector moved it to INIT; publishing qpn 0x%x psn 0x%x", c.Local().qps[0].qpn,
      c.Local().qps[0].psn);

  // Receives go in before connecting (INIT allows it): the peer's SEND may
  // arrive as soon as both sides pass the barrier.
  ibv_sge rsge{reinterpret_cast<uint64_t>(v.buffer.get() + kRecvOff), kArea, v.mr->lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* bad_recv = nullptr;
  if (int rc = ibv_post_recv(v.qp.get(), &rwr, &bad_recv); rc != 0) {
    return Fail("ibv_post_recv failed: %s", std::strerror(rc));
  }

  qpconnect::oob::ChannelOptions co;
  co.name = "socketpair to side " + std::to_string(1 - side.index);
  auto x = qpconnect::oob::CreateChannelExchanger(SocketChannel(fd), std::move(co));
  if (!x) return Fail("exchanger: %s", x.error().ToString().c_str());
  qpconnect::ConnectorOptions opts;
  opts.timeout = kTimeout;
  opts.plan.message_size = kArea;
  opts.on_step = [](qpconnect::ConnectPhase phase, std::string_view what) {
    Say("%s: %.*s", qpconnect::ConnectPhaseName(phase), static_cast<int>(what.size()), what.data());
  };
  auto report = c.Connect(**x, opts);
  if (!report) return Fail("connect: %s", report.error().ToString().c_str());
  Say("connected to %s qpn 0x%x; %zu finding(s), no error; exchange %.2f ms, connect %.2f ms",
      report->remote->identity.device.c_str(), c.remote_qpn(0), report->findings.size(),
      std::chrono::duration<double, std::milli>(report->timings.exchange).count(),
      std::chrono::duration<double, std::milli>(report->timings.connect).count());

  // Our own traffic on our own QP: RDMA WRITE into the peer's published
  // region, then a SEND. RC delivers them in order, so when the peer sees the
  // SEND, the WRITE has landed.
  const auto& peer_mr = report->remote->qps[0].mr;
  if (!peer_mr || peer_mr->length < kArea) return Fail("the peer published no usable MR");
  char* source = v.buffer.get() + kSourceOff;
  char* message = v.buffer.get() + kSendOff;
  std::snprintf(source, kArea, "RDMA WRITE from side %d, qpn 0x%x", side.index, v.qp->qp_num);
  std::snprintf(message, kArea, "SEND from side %d: my write is done", side.index);

  ibv_sge wsge{reinterpret_cast<uint64_t>(source), kArea, v.mr->lkey};
  ibv_send_wr write{};
  write.sg_list = &wsge;
  write.num_sge = 1;
  write.opcode = IBV_WR_RDMA_WRITE;
  write.send_flags = IBV_SEND_SIGNALED;
  write.wr.rdma.remote_addr = peer_mr->addr;
  write.wr.rdma.rkey = peer_mr->rkey;
  ibv_sge ssge{reinterpret_cast<uint64_t>(message), kArea, v.mr->lkey};
  ibv_send_wr send_wr{};
  send_wr.sg_list = &ssge;
  send_wr.num_sge = 1;
  send_wr.opcode = IBV_WR_SEND;
  send_wr.send_flags = IBV_SEND_SIGNALED;
  if (!Post(v.qp.get(), write) || !Post(v.qp.get(), send_wr)) return 1;
  Say("posted RDMA WRITE (%zu bytes to 0x%llx rkey 0x%x) and SEND", kArea,
      static_cast<unsigned long long>(peer_mr->addr), peer_mr->rkey);
  if (!Complete(v.cq.get(), 3)) return 1;  // our WRITE, our SEND, the peer's SEND

  char want_send[kArea], want_write[kArea];
  std::snprintf(want_send, sizeof want_send, "SEND from side %d: my write is done", 1 - side.index);
  std::snprintf(want_write, sizeof want_write, "RDMA WRITE from side %d, qpn 0x%x", 1 - side.index,
                c.remote_qpn(0));
  const char* got_send = v.buffer.get() + kRecvOff;
  const char* got_write = v.buffer.get() + kTargetOff;
  if (std::strcmp(got_send, want_send) != 0) return Fail("SEND content wrong: '%s'", got_send);
  if (std::strcmp(got_write, want_write) != 0) {
    return Fail("RDMA WRITE content wrong: '%s'", got_write);
  }
  Say("checked the peer's SEND: '%s'", got_send);
  Say("checked the peer's RDMA WRITE: '%s'", got_write);

  // Neither side tears its QP down while the other may still be checking.
  if (auto b = (*x)->Barrier("done", kTimeout); !b) {
    return Fail("final barrier: %s", b.error().ToString().c_str());
  }
  Say("traffic checked; releasing the connector, then my own verbs objects");
  return 0;
}

std::optional<uint16_t> Gid(const char* text) {
  int g = std::atoi(text);
  if (g < 0) return std::nullopt;
  return static_cast<uint16_t>(g);
}

}  // namespace

int main(int argc, char** argv) {
  Side sides[2];
  if (argc == 5) {
    sides[0] = {0, argv[1], Gid(argv[2])};
    sides[1] = {1, argv[3], Gid(argv[4])};
  } else {
    const char* d0 = std::getenv("QPC_DEV0");
    const char* d1 = std::getenv("QPC_DEV1");
    const char* g0 = std::getenv("QPC_GID0");
    const char* g1 = std::getenv("QPC_GID1");
    if (argc != 1 || d0 == nullptr || d1 == nullptr) {
      std::fprintf(stderr,
                   "usage: %s DEV0 GID0 DEV1 GID1   (or set QPC_DEV0/QPC_GID0/QPC_DEV1/QPC_GID1)\n",
                   argv[0]);
      return 2;
    }
    sides[0] = {0, d0, g0 != nullptr ? Gid(g0) : std::nullopt};
    sides[1] = {1, d1, g1 != nullptr ? Gid(g1) : std::nullopt};
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    std::perror("socketpair");
    return 1;
  }
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    int rc = RunSide(sides[1], fds[1]);
    close(fds[1]);
    std::_Exit(rc);
  }
  close(fds[1]);
  int rc = RunSide(sides[0], fds[0]);
  close(fds[0]);  // a failed parent makes the child's exchange fail at once
  int status = 0;
  if (waitpid(child, &status, 0) < 0) {
    std::perror("waitpid");
    return 1;
  }
  const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf(
      "example_adopted_cpp: %s\n",
      rc == 0 && child_ok ? "both sides checked the peer's RDMA WRITE and SEND: ok" : "FAILED");
  return rc == 0 && child_ok ? 0 : 1;
}
