// SPDX-License-Identifier: MIT
/*
 * cm_events: an rdma_cm program of ours that prints every event it gets, with
 * its parameters, in a form that does not depend on the host or the run (no
 * QPNs, addresses or ports), so that a test can diff the sequence printed
 * over the kernel's rdma_cm against the sequence printed through a
 * librdmacm-compatible library (issue 29). Plain C against librdmacm's API
 * only: an unmodified rdma_cm program as far as the library can tell.
 *
 *   cm_events --probe
 *       rdma_create_event_channel once: prints "rdma_create_event_channel ok"
 *       (exit 0) or "rdma_create_event_channel failed: ERROR" (exit 1).
 *   cm_events -s [-u] [-b LISTEN_ADDR] -p PORT [-d PDATA] [-r] [-t SECS] [-K] [-w SECS]
 *             [-N] [-L SECS] [-A] [-O OPTION]...
 *       server: listens (PORT 0: on a port the CM picks, printed on stderr
 *       as "# server: port N" before "listening"), takes ONE connect
 *       request, accepts it with PDATA
 *       (or rejects it with PDATA: -r), exchanges one message each way and,
 *       for RC, waits for the client's disconnect.
 *       -K  (failure tests) raise(SIGKILL) on itself right after printing
 *           the CONNECT_REQUEST event, before accepting: a peer that dies
 *           between request and reply
 *       -N  (failure tests) on DISCONNECTED, destroy the id without calling
 *           rdma_disconnect (the client still waits for the DREP), then
 *           stay 6 s before exiting
 *       -L  (failure tests) sleep SECS once listening, taking no event, then
 *           destroy the listening id with the requests that came meanwhile
 *           unseen, and exit 0 (their clients get REJECTED)
 *       -w  (failure tests) sleep SECS after printing the CONNECT_REQUEST
 *           event, before accepting (a test can stop it meanwhile)
 *   cm_events -c [-u] [-b BIND_ADDR] -a SERVER_ADDR -p PORT [-d PDATA] [-t SECS]
 *       client: resolves, connects with PDATA, exchanges one message each way (RC: the
 *       server's first, then its own)
 *       and, for RC, disconnects; it acks the DISCONNECTED event from another
 *       thread 300 ms later while its main thread destroys the id, and prints
 *       whether rdma_destroy_id waited for that ack (librdmacm's contract:
 *       it returns only once every event taken for the id is acked).
 *
 *   -u  UD over RDMA_PS_UDP (default: RC over RDMA_PS_TCP)
 *   -t  bound on every wait (an event, a completion), default 15 s
 *   -A  (address tests) the addresses on stderr, host-dependent: the
 *       server's listening id and the request's id ("# server: request id
 *       local AF_INET 10.99.0.1 peer AF_INET 10.99.0.2; listener AF_INET6
 *       ::"), the client's once connected
 *   -O  (address tests) rdma_set_option on the id before its bind (server) or
 *       resolve (client): afonly (AFONLY 1), dualstack (AFONLY 0),
 *       reuseaddr (REUSEADDR 1); repeatable
 *
 * Output (stdout, one line each, prefixed "server:" or "client:"):
 *   event NAME status S pdata P init I resp R retry T rnr N      (RC ids)
 *   event NAME status S pdata P qkey 0xQ ah_global G             (UD ids)
 *   recv "TEXT", send done, listening, ..., exit CODE
 * Diagnostics that may vary (the padded private_data_len, errors) go to
 * stderr as "# server: ..." lines.
 * NAME is rdma_event_str(). P is - when the event carries no private data of
 * ours, else the bytes the peer's program passed, in quotes. The CM pads
 * private data to a fixed size per message (REQ 56, REP 196, REJ 148, ...),
 * a library need not, so private data is framed as 'Q' 'C' LEN BYTES and only
 * LEN bytes are printed (with a "short" mark if the event's length is smaller
 * than the frame).
 *
 * Exit: 0 connected and exchanged (server: or rejected as asked), 1 a setup
 * or verbs error, 2 a wait timed out, 3 the connection failed as an event
 * (REJECTED, UNREACHABLE, CONNECT_ERROR, ADDR_ERROR, ROUTE_ERROR, ...).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

enum { EXIT_OK = 0, EXIT_SETUP = 1, EXIT_TIMEOUT = 2, EXIT_CONNFAIL = 3 };
enum { MSG_SIZE = 64, GRH_SIZE = 40 };

static const char* role = "?";
static int ud; /* RDMA_PS_UDP / UD instead of RDMA_PS_TCP / RC */
static int timeout_s = 15;
static int kill_at_request;    /* -K */
static int wait_at_request;    /* -w SECS */
static int no_disconnect;      /* -N */
static int drop_listener;      /* -L SECS */
static int show_addresses;     /* -A */
static const char* options[8]; /* -O */
static int n_options;

static void say(const char* fmt, ...) {
  va_list ap;
  printf("%s: ", role);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

/* Diagnostics that may differ run to run go to stderr, never to stdout. */
static void diag(const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "# %s: ", role);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static int finish(int code) {
  say("exit %d", code);
  return code;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- private data framing: 'Q' 'C' LEN BYTES ---- */

static int pack_pdata(const char* text, uint8_t* buf, size_t cap) {
  size_t n = strlen(text);
  if (n + 3 > cap || n > 255) return -1;
  buf[0] = 'Q';
  buf[1] = 'C';
  buf[2] = (uint8_t)n;
  memcpy(buf + 3, text, n);
  return (int)(n + 3);
}

static void format_pdata(const void* p, size_t len, char* out, size_t cap) {
  const uint8_t* b = p;
  size_t i, zeros = 0;
  if (!p || len == 0) {
    snprintf(out, cap, "-");
    return;
  }
  for (i = 0; i < len; i++) zeros += b[i] == 0;
  if (zeros == len) { /* the CM's padding, nothing sent */
    snprintf(out, cap, "-");
    return;
  }
  if (len >= 3 && b[0] == 'Q' && b[1] == 'C') {
    size_t n = b[2], o = 0, avail = len - 3 < n ? len - 3 : n;
    o += snprintf(out + o, cap - o, "\"");
    for (i = 0; i < avail && o + 5 < cap; i++) {
      unsigned char c = b[3 + i];
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
        out[o++] = (char)c;
      else
        o += snprintf(out + o, cap - o, "\\x%02x", c);
    }
    snprintf(out + o, cap - o, "\"%s", avail < n ? " short" : "");
    return;
  }
  snprintf(out, cap, "not-ours:%02x%02x%02x%02x", b[0], len > 1 ? b[1] : 0, len > 2 ? b[2] : 0,
           len > 3 ? b[3] : 0);
}

/* ---- events ---- */

static void print_event(const struct rdma_cm_event* ev) {
  char pd[600];
  if (ud) {
    format_pdata(ev->param.ud.private_data, ev->param.ud.private_data_len, pd, sizeof pd);
    say("event %s status %d pdata %s qkey 0x%x ah_global %d", rdma_event_str(ev->event), ev->status,
        pd, ev->param.ud.qkey, ev->param.ud.ah_attr.is_global ? 1 : 0);
  } else {
    format_pdata(ev->param.conn.private_data, ev->param.conn.private_data_len, pd, sizeof pd);
    say("event %s status %d pdata %s init %u resp %u retry %u rnr %u", rdma_event_str(ev->event),
        ev->status, pd, ev->param.conn.initiator_depth, ev->param.conn.responder_resources,
        ev->param.conn.retry_count, ev->param.conn.rnr_retry_count);
  }
  diag("event %s (status %d, private_data_len %u)", rdma_event_str(ev->event), ev->status,
       ud ? ev->param.ud.private_data_len : ev->param.conn.private_data_len);
}

/* Waits (bounded) for the next event and prints it; 0, or EXIT_TIMEOUT / EXIT_SETUP. */
static int next_event(struct rdma_event_channel* ch, struct rdma_cm_event** ev) {
  struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
  int r;
  do {
    r = poll(&pfd, 1, timeout_s * 1000);
  } while (r < 0 && errno == EINTR);
  if (r == 0) {
    say("timeout: no event within %d s", timeout_s);
    return EXIT_TIMEOUT;
  }
  if (r < 0) {
    say("poll on the event channel failed: %s", strerror(errno));
    return EXIT_SETUP;
  }
  if (rdma_get_cm_event(ch, ev)) {
    say("rdma_get_cm_event failed: %s", strerror(errno));
    return EXIT_SETUP;
  }
  print_event(*ev);
  return 0;
}

static int is_failure_event(enum rdma_cm_event_type t) {
  switch (t) {
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
    case RDMA_CM_EVENT_DISCONNECTED:
      return 1;
    default:
      return 0;
  }
}

/* Waits for event `want`; any other event is printed and ends the wait with
 * EXIT_CONNFAIL (an unexpected but orderly event) or EXIT_SETUP. */
static int expect_event(struct rdma_event_channel* ch, enum rdma_cm_event_type want,
                        struct rdma_cm_event** out) {
  struct rdma_cm_event* ev;
  int r = next_event(ch, &ev);
  if (r) return r;
  if (ev->event == want) {
    if (out)
      *out = ev;
    else
      rdma_ack_cm_event(ev);
    return 0;
  }
  r = is_failure_event(ev->event) ? EXIT_CONNFAIL : EXIT_SETUP;
  if (r == EXIT_SETUP) say("unexpected event (wanted %s)", rdma_event_str(want));
  rdma_ack_cm_event(ev);
  return r;
}

/* ---- verbs resources of one connection ---- */

struct conn {
  struct rdma_cm_id* id;
  struct ibv_pd* pd;
  struct ibv_cq* cq;
  struct ibv_mr* mr;
  struct ibv_ah* ah;
  /* [0] receive (GRH first for UD), [1] send, [2] the RC server's "bye" */
  char buf[3][GRH_SIZE + MSG_SIZE];
  int has_qp;
  unsigned seen; /* completions polled and not yet awaited (wr_id bits) */
};

static int conn_setup(struct conn* c, struct rdma_cm_id* id) {
  struct ibv_qp_init_attr attr;
  c->id = id;
  c->pd = ibv_alloc_pd(id->verbs);
  if (!c->pd) return say("ibv_alloc_pd failed: %s", strerror(errno)), EXIT_SETUP;
  c->cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
  if (!c->cq) return say("ibv_create_cq failed: %s", strerror(errno)), EXIT_SETUP;
  c->mr = ibv_reg_mr(c->pd, c->buf, sizeof c->buf, IBV_ACCESS_LOCAL_WRITE);
  if (!c->mr) return say("ibv_reg_mr failed: %s", strerror(errno)), EXIT_SETUP;
  memset(&attr, 0, sizeof attr);
  attr.send_cq = attr.recv_cq = c->cq;
  attr.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
  attr.cap.max_send_wr = attr.cap.max_recv_wr = 3;
  attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
  attr.sq_sig_all = 1;
  if (rdma_create_qp(id, c->pd, &attr))
    return say("rdma_create_qp failed: %s", strerror(errno)), EXIT_SETUP;
  c->has_qp = 1;
  return 0;
}

static void conn_teardown(struct conn* c) {
  if (c->has_qp) rdma_destroy_qp(c->id);
  c->has_qp = 0;
  if (c->ah) ibv_destroy_ah(c->ah);
  if (c->mr) ibv_dereg_mr(c->mr);
  if (c->cq) ibv_destroy_cq(c->cq);
  if (c->pd) ibv_dealloc_pd(c->pd);
  c->ah = NULL, c->mr = NULL, c->cq = NULL, c->pd = NULL;
}

static int post_recv(struct conn* c) {
  struct ibv_sge sge = {.addr = (uintptr_t)c->buf[0],
                        .length = (uint32_t)((ud ? GRH_SIZE : 0) + MSG_SIZE),
                        .lkey = c->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;
  memset(c->buf[0], 0, sizeof c->buf[0]);
  if (ibv_post_recv(c->id->qp, &wr, &bad))
    return say("ibv_post_recv failed: %s", strerror(errno)), EXIT_SETUP;
  return 0;
}

/* RC client: a receive for the server's "bye" (wr_id 4), which the server
 * sends once its own message was acknowledged. */
static int post_recv_bye(struct conn* c) {
  struct ibv_sge sge = {.addr = (uintptr_t)c->buf[2], .length = MSG_SIZE, .lkey = c->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = 4, .sg_list = &sge, .num_sge = 1}, *bad;
  if (ibv_post_recv(c->id->qp, &wr, &bad))
    return say("ibv_post_recv failed: %s", strerror(errno)), EXIT_SETUP;
  return 0;
}

static int post_send(struct conn* c, const char* text, uint32_t remote_qpn, uint32_t qkey) {
  struct ibv_sge sge = {.addr = (uintptr_t)c->buf[1], .length = MSG_SIZE, .lkey = c->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND}, *bad;
  memset(c->buf[1], 0, sizeof c->buf[1]);
  snprintf(c->buf[1], MSG_SIZE, "%s", text);
  if (ud) {
    wr.wr.ud.ah = c->ah;
    wr.wr.ud.remote_qpn = remote_qpn;
    wr.wr.ud.remote_qkey = qkey;
  }
  if (ibv_post_send(c->id->qp, &wr, &bad))
    return say("ibv_post_send failed: %s", strerror(errno)), EXIT_SETUP;
  return 0;
}

/* Polls (bounded) until the completions in `want` (bit 1 receive, bit 2
 * send, bit 4 the RC server's "bye") have all arrived, counting those an
 * earlier wait polled and did not want; prints only a failure. */
static int await_completions(struct conn* c, unsigned want, struct ibv_wc* recv_wc) {
  double deadline = now_s() + timeout_s;
  struct ibv_wc wc;
  while ((c->seen & want) != want) {
    int n = ibv_poll_cq(c->cq, 1, &wc);
    if (n < 0) return say("ibv_poll_cq failed"), EXIT_SETUP;
    if (n == 1) {
      if (wc.status != IBV_WC_SUCCESS) {
        say("completion error: %s (wr %s)", ibv_wc_status_str(wc.status),
            wc.wr_id == 2 ? "send" : "recv");
        return EXIT_SETUP;
      }
      c->seen |= (unsigned)wc.wr_id;
      if (wc.wr_id == 1 && recv_wc) *recv_wc = wc;
      continue;
    }
    if (now_s() > deadline) {
      say("timeout: no %s completion within %d s", (want & ~c->seen) & 2 ? "send" : "recv",
          timeout_s);
      return EXIT_TIMEOUT;
    }
    usleep(200);
  }
  c->seen &= ~want; /* taken: a later wait for the same kind waits anew */
  return 0;
}

/* The completions in `want`, in a fixed order (send, then receive), whatever
 * order they came in. */
static void print_completions(struct conn* c, unsigned want) {
  if (want & 2) say("send done");
  if (want & 1) say("recv \"%.*s\"", MSG_SIZE, c->buf[0] + (ud ? GRH_SIZE : 0));
}

static int wait_completions(struct conn* c, unsigned want, struct ibv_wc* recv_wc) {
  int r = await_completions(c, want, recv_wc);
  if (r == 0) print_completions(c, want);
  return r;
}

/* ---- addresses ---- */

static int make_addr(const char* host, const char* port, struct sockaddr_storage* ss) {
  struct addrinfo hints, *res;
  int r;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  r = getaddrinfo(host, port ? port : "0", &hints, &res);
  if (r) {
    say("bad address %s: %s", host, gai_strerror(r));
    return -1;
  }
  memset(ss, 0, sizeof *ss);
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return 0;
}

/* "AF_INET 10.99.0.1", "AF_INET6 fe80::1%veth0" (no port). */
static void addr_text(const struct sockaddr* sa, char* out, size_t cap) {
  char host[NI_MAXHOST] = "?";
  socklen_t len =
      sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) {
    snprintf(out, cap, "family-%d", sa->sa_family);
    return;
  }
  getnameinfo(sa, len, host, sizeof host, NULL, 0, NI_NUMERICHOST);
  snprintf(out, cap, "%s %.100s", sa->sa_family == AF_INET ? "AF_INET" : "AF_INET6", host);
}

static void show_id(const char* what, struct rdma_cm_id* id, struct rdma_cm_id* listener) {
  char local[128], peer[128], lis[128] = "";
  if (!show_addresses) return;
  addr_text(rdma_get_local_addr(id), local, sizeof local);
  addr_text(rdma_get_peer_addr(id), peer, sizeof peer);
  if (listener) addr_text(rdma_get_local_addr(listener), lis, sizeof lis);
  diag("%s local %s peer %s%s%s", what, local, peer, listener ? "; listener " : "", lis);
}

/* Applies the -O options to `id`; EXIT_SETUP on a refusal. */
static int apply_options(struct rdma_cm_id* id) {
  int i;
  for (i = 0; i < n_options; i++) {
    int one = 1, zero = 0, name, *val;
    if (strcmp(options[i], "afonly") == 0) {
      name = RDMA_OPTION_ID_AFONLY;
      val = &one;
    } else if (strcmp(options[i], "dualstack") == 0) {
      name = RDMA_OPTION_ID_AFONLY;
      val = &zero;
    } else if (strcmp(options[i], "reuseaddr") == 0) {
      name = RDMA_OPTION_ID_REUSEADDR;
      val = &one;
    } else {
      say("unknown option %s", options[i]);
      return EXIT_SETUP;
    }
    if (rdma_set_option(id, RDMA_OPTION_ID, name, val, sizeof *val)) {
      say("rdma_set_option %s failed: %s", options[i], strerror(errno));
      return EXIT_SETUP;
    }
  }
  return 0;
}

/* ---- server ---- */

static int run_server(const char* bind_addr, const char* port, const char* pdata_text, int reject) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id *listen_id = NULL, *id = NULL;
  struct rdma_cm_event* ev;
  struct sockaddr_storage ss;
  struct rdma_conn_param cp;
  struct conn c;
  uint8_t pdata[256];
  int plen = 0, r, code = EXIT_OK;

  memset(&c, 0, sizeof c);
  if (pdata_text && (plen = pack_pdata(pdata_text, pdata, sizeof pdata)) < 0)
    return say("private data too long"), finish(EXIT_SETUP);
  ch = rdma_create_event_channel();
  if (!ch) return say("rdma_create_event_channel failed: %s", strerror(errno)), finish(EXIT_SETUP);
  if (rdma_create_id(ch, &listen_id, NULL, ud ? RDMA_PS_UDP : RDMA_PS_TCP)) {
    say("rdma_create_id failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if (make_addr(bind_addr ? bind_addr : "0.0.0.0", port, &ss) || apply_options(listen_id)) {
    code = EXIT_SETUP;
    goto out;
  }
  if (rdma_bind_addr(listen_id, (struct sockaddr*)&ss)) {
    say("rdma_bind_addr failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if (rdma_listen(listen_id, 4)) {
    say("rdma_listen failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  /* The port first (stderr, unbuffered): a test that sees "listening" finds it. */
  diag("port %u", ntohs(rdma_get_src_port(listen_id)));
  say("listening");
  if (drop_listener > 0) {
    sleep((unsigned)drop_listener);
    rdma_destroy_id(listen_id);
    listen_id = NULL;
    say("destroyed the listening id, its requests unseen");
    goto out;
  }

  r = expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
  if (r) {
    code = r;
    goto out;
  }
  id = ev->id;
  say("request on the listening id: %s", ev->listen_id == listen_id ? "yes" : "no");
  show_id("request id", id, listen_id);
  rdma_ack_cm_event(ev);
  if (kill_at_request) {
    say("killing myself (SIGKILL) before the accept");
    raise(SIGKILL);
  }
  if (wait_at_request > 0) {
    say("waiting %d s before the accept", wait_at_request);
    sleep((unsigned)wait_at_request);
  }

  memset(&cp, 0, sizeof cp);
  cp.private_data = plen ? pdata : NULL;
  cp.private_data_len = (uint8_t)plen;
  if (reject) {
    if (rdma_reject(id, cp.private_data, cp.private_data_len)) {
      say("rdma_reject failed: %s", strerror(errno));
      code = EXIT_SETUP;
    } else {
      say("rejected");
    }
    goto out;
  }

  if ((r = conn_setup(&c, id)) || (r = post_recv(&c))) {
    code = r;
    goto out;
  }
  cp.initiator_depth = 1;
  cp.responder_resources = 2;
  cp.retry_count = 3;
  cp.rnr_retry_count = 4;
  if (rdma_accept(id, &cp)) {
    say("rdma_accept failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  say("accepted");

  if (ud) {
    /* The client speaks first; answer it through an AH made from its datagram. */
    struct ibv_wc wc;
    if ((r = wait_completions(&c, 1, &wc))) {
      code = r;
      goto out;
    }
    c.ah = ibv_create_ah_from_wc(c.pd, &wc, (struct ibv_grh*)c.buf[0], id->port_num);
    if (!c.ah) {
      say("ibv_create_ah_from_wc failed: %s", strerror(errno));
      code = EXIT_SETUP;
      goto out;
    }
    if ((r = post_send(&c, "server message", wc.src_qp, RDMA_UDP_QKEY)) ||
        (r = wait_completions(&c, 2, NULL)))
      code = r;
    goto out;
  }

  if ((r = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, NULL))) {
    code = r;
    goto out;
  }
  /* Then "bye", once our message was acknowledged (its send completed), and
   * not waited for: the client disconnects only once it has it, so that its
   * QP never moves to ERROR while our message still waits for its ACK (under
   * load rxe lost that ACK now and then: "transport retry counter exceeded"
   * on our send though the client had the message, lab_rdmacm_fail_psk and
   * unanswered_dreq). "bye"'s own ACK may be lost the same way: nothing
   * polls for it. Prints nothing. */
  if ((r = post_send(&c, "server message", 0, 0)) || (r = wait_completions(&c, 3, NULL)) ||
      (r = post_send(&c, "bye", 0, 0))) {
    code = r;
    goto out;
  }
  /* The client disconnects once it has our message. */
  if ((r = expect_event(ch, RDMA_CM_EVENT_DISCONNECTED, NULL))) {
    code = r;
    goto out;
  }
  if (no_disconnect)
    say("destroying the id without rdma_disconnect");
  else
    rdma_disconnect(id); /* sends the DREP; its result is not part of the output */

out:
  conn_teardown(&c);
  if (id) rdma_destroy_id(id);
  if (no_disconnect && code == EXIT_OK) {
    /* alive, its links open: the client's DISCONNECTED can only come from
       an answer to its DREQ, not from this process going away */
    say("id destroyed; staying 6 s");
    sleep(6);
  }
  if (listen_id) rdma_destroy_id(listen_id);
  rdma_destroy_event_channel(ch);
  return finish(code);
}

/* ---- client ---- */

/* The client's DISCONNECTED event, acked 300 ms late from another thread. */
struct late_ack {
  pthread_t thread;
  struct rdma_cm_event* event;
  int started;
  int acked;
};

static void* ack_late(void* arg) {
  struct late_ack* late = arg;
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  __atomic_store_n(&late->acked, 1, __ATOMIC_SEQ_CST);
  rdma_ack_cm_event(late->event);
  return NULL;
}

static int run_client(const char* bind_addr, const char* server, const char* port,
                      const char* pdata_text) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id = NULL;
  struct rdma_cm_event* ev;
  struct sockaddr_storage src, dst;
  struct rdma_conn_param cp;
  struct conn c;
  uint8_t pdata[256];
  uint32_t remote_qpn = 0, remote_qkey = 0;
  int plen = 0, r, code = EXIT_OK, connected = 0;
  struct late_ack late;

  memset(&c, 0, sizeof c);
  memset(&late, 0, sizeof late);
  if (pdata_text && (plen = pack_pdata(pdata_text, pdata, sizeof pdata)) < 0)
    return say("private data too long"), finish(EXIT_SETUP);
  ch = rdma_create_event_channel();
  if (!ch) return say("rdma_create_event_channel failed: %s", strerror(errno)), finish(EXIT_SETUP);
  if (rdma_create_id(ch, &id, NULL, ud ? RDMA_PS_UDP : RDMA_PS_TCP)) {
    say("rdma_create_id failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if ((bind_addr && make_addr(bind_addr, NULL, &src)) || make_addr(server, port, &dst) ||
      apply_options(id)) {
    code = EXIT_SETUP;
    goto out;
  }
  if (rdma_resolve_addr(id, bind_addr ? (struct sockaddr*)&src : NULL, (struct sockaddr*)&dst,
                        2000)) {
    say("rdma_resolve_addr failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if ((r = expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))) {
    code = r;
    goto out;
  }
  if (rdma_resolve_route(id, 2000)) {
    say("rdma_resolve_route failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if ((r = expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))) {
    code = r;
    goto out;
  }
  if ((r = conn_setup(&c, id)) || (r = post_recv(&c)) || (!ud && (r = post_recv_bye(&c)))) {
    code = r;
    goto out;
  }

  memset(&cp, 0, sizeof cp);
  cp.private_data = plen ? pdata : NULL;
  cp.private_data_len = (uint8_t)plen;
  cp.initiator_depth = 2;
  cp.responder_resources = 3;
  cp.retry_count = 6;
  cp.rnr_retry_count = 5;
  if (rdma_connect(id, &cp)) {
    say("rdma_connect failed: %s", strerror(errno));
    code = EXIT_SETUP;
    goto out;
  }
  if ((r = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, &ev))) {
    code = r;
    goto out;
  }
  connected = !ud;
  show_id("connected id", id, NULL);
  if (ud) {
    remote_qpn = ev->param.ud.qp_num;
    remote_qkey = ev->param.ud.qkey;
    c.ah = ibv_create_ah(c.pd, &ev->param.ud.ah_attr);
    if (!c.ah) {
      say("ibv_create_ah failed: %s", strerror(errno));
      rdma_ack_cm_event(ev);
      code = EXIT_SETUP;
      goto out;
    }
  }
  rdma_ack_cm_event(ev);

  if (ud) {
    if ((r = post_send(&c, "client message", remote_qpn, remote_qkey)) ||
        (r = wait_completions(&c, 3, NULL))) {
      code = r;
      goto out;
    }
  } else {
    /* RC: the server's message first, then ours, so that the server's send
     * has long been acknowledged when we disconnect. Sent at once, a receive
     * completing could be followed by our QP's move to ERROR before its
     * responder acknowledged the server's message (rxe completes before it
     * acknowledges), and the server's send then failed with "transport retry
     * counter exceeded" (lab_rdmacm_fail_unanswered_dreq, once). The output
     * is the same. */
    if ((r = await_completions(&c, 1, NULL)) ||
        (r = post_send(&c, "client message", remote_qpn, remote_qkey)) ||
        (r = await_completions(&c, 2, NULL))) {
      code = r;
      goto out;
    }
    print_completions(&c, 3);
    /* The server's "bye": its message was acknowledged, our QP may go to
     * ERROR now. Prints nothing. */
    if ((r = await_completions(&c, 4, NULL))) {
      code = r;
      goto out;
    }
  }
  if (connected) {
    if (rdma_disconnect(id)) {
      say("rdma_disconnect failed: %s", strerror(errno));
      code = EXIT_SETUP;
      goto out;
    }
    if ((r = expect_event(ch, RDMA_CM_EVENT_DISCONNECTED, &ev))) {
      code = r;
    } else {
      late.event = ev;
      if (pthread_create(&late.thread, NULL, ack_late, &late) == 0)
        late.started = 1;
      else
        rdma_ack_cm_event(ev);
    }
  }

out:
  conn_teardown(&c);
  if (id) rdma_destroy_id(id);
  if (late.started) {
    int waited = __atomic_load_n(&late.acked, __ATOMIC_SEQ_CST);
    pthread_join(late.thread, NULL);
    say("rdma_destroy_id returned after the late ack of DISCONNECTED: %s", waited ? "yes" : "no");
  }
  rdma_destroy_event_channel(ch);
  return finish(code);
}

static int usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s --probe\n"
          "       %s -s [-u] [-b LISTEN_ADDR] -p PORT [-d PDATA] [-r] [-t SECS] [-K] [-w SECS]\n"
          "             [-N] [-L SECS] [-A] [-O afonly|dualstack|reuseaddr]...\n"
          "       %s -c [-u] [-b BIND_ADDR] -a SERVER_ADDR -p PORT [-d PDATA] [-t SECS] [-A]\n"
          "             [-O afonly|dualstack|reuseaddr]...\n",
          argv0, argv0, argv0);
  return EXIT_SETUP;
}

int main(int argc, char** argv) {
  const char *bind_addr = NULL, *server = NULL, *port = NULL, *pdata = NULL;
  int mode = 0, reject = 0, op;

  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    struct rdma_event_channel* ch = rdma_create_event_channel();
    if (!ch) {
      printf("rdma_create_event_channel failed: %s\n", strerror(errno));
      return 1;
    }
    printf("rdma_create_event_channel ok\n");
    rdma_destroy_event_channel(ch);
    return 0;
  }
  while ((op = getopt(argc, argv, "scub:a:p:d:rt:Kw:NL:AO:")) != -1) {
    switch (op) {
      case 's':
        mode = 's';
        break;
      case 'c':
        mode = 'c';
        break;
      case 'u':
        ud = 1;
        break;
      case 'b':
        bind_addr = optarg;
        break;
      case 'a':
        server = optarg;
        break;
      case 'p':
        port = optarg;
        break;
      case 'd':
        pdata = optarg;
        break;
      case 'r':
        reject = 1;
        break;
      case 't':
        timeout_s = atoi(optarg);
        break;
      case 'K':
        kill_at_request = 1;
        break;
      case 'w':
        wait_at_request = atoi(optarg);
        break;
      case 'N':
        no_disconnect = 1;
        break;
      case 'L':
        drop_listener = atoi(optarg);
        break;
      case 'A':
        show_addresses = 1;
        break;
      case 'O':
        if (n_options == (int)(sizeof options / sizeof options[0])) return usage(argv[0]);
        options[n_options++] = optarg;
        break;
      default:
        return usage(argv[0]);
    }
  }
  if (!mode || !port || (mode == 'c' && !server) || timeout_s <= 0 || optind != argc)
    return usage(argv[0]);
  role = mode == 's' ? "server" : "client";
  say("%s %s port space %s", mode == 's' ? "listen" : "connect", ud ? "UD" : "RC",
      ud ? "RDMA_PS_UDP" : "RDMA_PS_TCP");
  if (mode == 's') return run_server(bind_addr, port, pdata, reject);
  return run_client(bind_addr, server, port, pdata);
}
