// SPDX-License-Identifier: MIT
/* Owning mode from C: the library creates the device context, PD, CQs, an RC
 * QP and a registered buffer (qpc_connector_open), connects it over the
 * program's OWN channel (a socketpair given to qpconnect as two C callbacks,
 * qpc_channel), and then this program passes real traffic on the QP: a
 * SEND/RECV ping-pong in the library's buffer, polled with plain
 * ibv_poll_cq, with every message checked; then the library's own traffic
 * proof (qpc_run_traffic: ping-pong plus RDMA WRITE and READ, all checked).
 *
 * The two sides are a parent (server) and its forked child (client), each on
 * its own device.
 *
 *   example_owning_c [DEV0 GID0 DEV1 GID1]
 *
 * Without arguments the devices and GID indexes come from QPC_DEV0, QPC_GID0,
 * QPC_DEV1 and QPC_GID1 (the Soft-RoCE lab sets them: docs/lab.md). A GID of
 * -1 lets qpconnect choose. Exits 0 only when both sides checked the data. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <qpconnect/qpconnect.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kPingPongs = 10, kMessageBytes = 4096, kTimeoutMs = 20000 };

static char g_tag[64]; /* "[side 0 rxe0]" on every line this process prints */

static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* fmt, ...) {
  va_list ap;
  printf("%s ", g_tag);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

/* Prints what failed and returns the failing exit status. */
static int fail(const char* what, const qpc_error* err) {
  say("%s failed: %s", what, qpc_error_message(err));
  return 1;
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the program's own channel: one end of a socketpair ---- */

static int wait_fd(int fd, short events, int timeout_ms) {
  struct pollfd p;
  int r;
  p.fd = fd;
  p.events = events;
  p.revents = 0;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return ETIMEDOUT;
  return r < 0 ? errno : 0;
}

static int channel_send(void* user, const void* buf, size_t len, int timeout_ms) {
  int fd = *(int*)user;
  const char* p = buf;
  long long deadline = now_ms() + timeout_ms;
  while (len > 0) {
    long long left = deadline - now_ms();
    int rc = wait_fd(fd, POLLOUT, left < 0 ? 0 : (int)left);
    ssize_t n;
    if (rc != 0) return rc;
    n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return errno;
    if (n > 0) {
      p += n;
      len -= (size_t)n;
    }
  }
  return 0;
}

static ssize_t channel_receive(void* user, void* buf, size_t max, int timeout_ms) {
  int fd = *(int*)user;
  int rc = wait_fd(fd, POLLIN, timeout_ms);
  ssize_t n;
  if (rc != 0) return -rc;
  n = recv(fd, buf, max, 0);
  return n < 0 ? -errno : n; /* 0: the peer closed */
}

/* ---- traffic on the library's QP and buffer ---- */

/* Waits for one successful completion on `cq`; its wr_id in *wr_id. */
static int wait_completion(struct ibv_cq* cq, const char* what, uint64_t* wr_id) {
  long long deadline = now_ms() + kTimeoutMs;
  struct ibv_wc wc;
  int n;
  while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
    if (now_ms() > deadline) {
      say("%s: no completion within %d ms", what, kTimeoutMs);
      return 0;
    }
  }
  if (n < 0 || wc.status != IBV_WC_SUCCESS) {
    say("%s: completion failed: %s", what, n < 0 ? "ibv_poll_cq" : ibv_wc_status_str(wc.status));
    return 0;
  }
  if (wr_id != NULL) *wr_id = wc.wr_id;
  return 1;
}

/* SEND `text` from QP 0's send area and wait for its completion. */
static int send_text(qpc_connector* c, const char* text, qpc_error** err) {
  void* area;
  size_t len;
  if (qpc_connector_buffer(c, 0, QPC_BUFFER_SEND, 0, &area, &len, err) != QPC_OK) return 0;
  snprintf(area, len, "%s", text);
  if (qpc_connector_post_send(c, 0, (uint32_t)strlen(text) + 1, err) != QPC_OK) return 0;
  return wait_completion(qpc_connector_send_cq(c), "SEND", NULL);
}

/* Wait for the peer's SEND, check it reads `want`, and repost its slot. */
static int receive_text(qpc_connector* c, const char* want, qpc_error** err) {
  uint64_t wr_id;
  uint32_t slot;
  void* data;
  if (!wait_completion(qpc_connector_recv_cq(c), "RECV", &wr_id)) return 0;
  slot = (uint32_t)(wr_id & 0xffffffffu); /* receive wr_id: (qp << 32) | slot */
  if (qpc_connector_buffer(c, 0, QPC_BUFFER_RECV, slot, &data, NULL, err) != QPC_OK) return 0;
  if (strcmp(data, want) != 0) {
    say("RECV in slot %u: got '%s', want '%s'", slot, (const char*)data, want);
    return 0;
  }
  return qpc_connector_post_recv(c, 0, slot, err) == QPC_OK;
}

static int ping_pong(qpc_connector* c, int client, qpc_error** err) {
  char ping[64], pong[64];
  int i;
  for (i = 0; i < kPingPongs; ++i) {
    snprintf(ping, sizeof ping, "ping %d from the client", i);
    snprintf(pong, sizeof pong, "pong %d from the server", i);
    if (client ? !send_text(c, ping, err) || !receive_text(c, pong, err)
               : !receive_text(c, ping, err) || !send_text(c, pong, err)) {
      if (qpc_error_status(*err) != QPC_OK) say("ping-pong %d: %s", i, qpc_error_message(*err));
      return 0;
    }
  }
  return 1;
}

static void on_step(void* user, qpc_phase phase, const char* what) {
  (void)user;
  say("%s: %s", qpc_phase_name(phase), what);
}

/* One side, start to end. Returns the process's exit status. */
static int run_side(int side, const char* device, int gid, int fd) {
  qpc_error* err = NULL;
  qpc_connector* c = NULL;
  qpc_exchanger* x = NULL;
  qpc_open_options oo;
  qpc_connect_options co;
  qpc_exchanger_options xo;
  qpc_traffic_options to;
  qpc_traffic_report tr;
  qpc_timings t;
  qpc_channel channel;
  struct ibv_qp_attr attr;
  struct ibv_qp_init_attr init;
  char name[32];
  size_t i;
  int rc = 1;

  snprintf(g_tag, sizeof g_tag, "[side %d %s]", side, device);
  qpc_open_options_init(&oo);
  oo.device = device;
  oo.gid_index = gid;
  oo.message_size = kMessageBytes;
  if (qpc_connector_open(&oo, &c, &err) != QPC_OK) {
    rc = fail("qpc_connector_open", err);
    goto out;
  }
  say("the library opened %s: %zu %s QP (qpn 0x%x), CQs and a registered buffer; %u receives "
      "posted",
      device, qpc_connector_num_qps(c), qpc_transport_name(qpc_connector_transport(c)),
      qpc_connector_qp(c, 0)->qp_num, qpc_connector_rx_depth(c));

  channel.send = channel_send;
  channel.receive = channel_receive;
  channel.user = &fd;
  qpc_exchanger_options_init(&xo);
  snprintf(name, sizeof name, "socketpair to side %d", 1 - side);
  xo.channel_name = name;
  if (qpc_exchanger_from_channel(&channel, &xo, &x, &err) != QPC_OK) {
    rc = fail("qpc_exchanger_from_channel", err);
    goto out;
  }
  qpc_connect_options_init(&co);
  co.timeout_ms = kTimeoutMs;
  co.on_step = on_step;
  if (qpc_connector_connect(c, x, &co, &err) != QPC_OK) {
    say("connect failed in phase %s: %s", qpc_phase_name(qpc_connector_reached(c)),
        qpc_error_message(err));
    goto out;
  }

  /* What the connect found and how long it took. */
  for (i = 0; i < qpc_connector_finding_count(c); ++i) {
    qpc_finding f;
    if (qpc_connector_finding(c, i, &f, &err) == QPC_OK) say("finding: %s", f.text);
  }
  qpc_connector_timings(c, &t);
  say("%zu finding(s), none an error; open %.2f ms, exchange %.2f ms, connect %.2f ms, "
      "barrier %.2f ms",
      qpc_connector_finding_count(c), t.open_ns / 1e6, t.exchange_ns / 1e6, t.connect_ns / 1e6,
      t.barrier_ns / 1e6);

  /* The QP is an ordinary struct ibv_qp*: ask the verbs layer directly. */
  if (ibv_query_qp(qpc_connector_qp(c, 0), &attr, IBV_QP_STATE | IBV_QP_PATH_MTU, &init) != 0 ||
      attr.qp_state != IBV_QPS_RTS) {
    say("QP 0 is not in RTS");
    goto out;
  }
  say("qpn 0x%x is in RTS (ibv_query_qp), path MTU %d, connected to the peer's qpn 0x%x",
      qpc_connector_qp(c, 0)->qp_num, 128 << attr.path_mtu, qpc_connector_remote_qpn(c, 0));

  if (!ping_pong(c, side == 1, &err)) goto out;
  say("own ping-pong: %d SEND/RECV round trips in the library's buffer, every message checked",
      kPingPongs);

  qpc_traffic_options_init(&to);
  to.iters = 100;
  to.timeout_ms = kTimeoutMs;
  if (qpc_run_traffic(c, side == 1 ? QPC_ROLE_CLIENT : QPC_ROLE_SERVER, &to, &tr, &err) != QPC_OK) {
    rc = fail("qpc_run_traffic", err);
    goto out;
  }
  say("library traffic proof: %llu messages, %.1f us/round trip, RDMA WRITE %s, READ %s",
      (unsigned long long)tr.messages, tr.avg_rtt_us, tr.rdma_write_checked ? "checked" : "-",
      tr.rdma_read_checked ? "checked" : "-");

  /* Neither side frees its QP while the other may still be checking. */
  if (qpc_exchanger_barrier(x, "done", kTimeoutMs, &err) != QPC_OK) {
    rc = fail("final barrier", err);
    goto out;
  }
  say("traffic checked; freeing the connector (every verbs object it created)");
  rc = 0;
out:
  if (rc != 0 && x != NULL) qpc_exchanger_abort(x, "example failed", 1000);
  qpc_exchanger_free(x);
  qpc_connector_free(c);
  qpc_error_free(err);
  return rc;
}

int main(int argc, char** argv) {
  const char* dev[2];
  int gid[2];
  int fds[2], status = 0, rc;
  pid_t child;
  if (argc == 5) {
    dev[0] = argv[1];
    gid[0] = atoi(argv[2]);
    dev[1] = argv[3];
    gid[1] = atoi(argv[4]);
  } else {
    const char* g0 = getenv("QPC_GID0");
    const char* g1 = getenv("QPC_GID1");
    dev[0] = getenv("QPC_DEV0");
    dev[1] = getenv("QPC_DEV1");
    if (argc != 1 || dev[0] == NULL || dev[1] == NULL) {
      fprintf(stderr,
              "usage: %s DEV0 GID0 DEV1 GID1   (or set QPC_DEV0/QPC_GID0/QPC_DEV1/QPC_GID1)\n",
              argv[0]);
      return 2;
    }
    gid[0] = g0 != NULL ? atoi(g0) : -1;
    gid[1] = g1 != NULL ? atoi(g1) : -1;
  }
  printf("example_owning_c: qpconnect %s\n", qpc_version_string());
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    perror("socketpair");
    return 1;
  }
  fflush(stdout);
  child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    rc = run_side(1, dev[1], gid[1], fds[1]);
    close(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  rc = run_side(0, dev[0], gid[0], fds[0]);
  close(fds[0]); /* a failed parent makes the child's exchange fail at once */
  if (waitpid(child, &status, 0) < 0) {
    perror("waitpid");
    return 1;
  }
  rc = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  printf(
      "example_owning_c: %s\n",
      rc == 0 ? "both sides checked the ping-pong and the library's traffic proof: ok" : "FAILED");
  return rc;
}
