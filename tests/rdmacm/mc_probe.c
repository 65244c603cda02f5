// SPDX-License-Identifier: MIT
/*
 * mc_probe: the multicast calls of a librdmacm-compatible library (issue 39)
 * checked from a program, where mckey does not look: the refusals, the JOIN
 * event's param.ud, the IP group held while joined and dropped when the id
 * goes without a leave, a QP destroyed while attached, a synchronous id.
 * Plain C against librdmacm's API. Run through the library (mc_probe.sh);
 * some answers are the library's own (a group joined twice: EADDRINUSE,
 * where the kernel's rdma_cm joins it again).
 *
 *   mc_probe -b ADDR -n NETDEV -m GROUP4 -M GROUP4B [-U]
 *     ADDR an address of a RoCE device on NETDEV; GROUP4, GROUP4B two IPv4
 *     multicast groups
 *
 * Prints "ok: WHAT" or "FAIL: WHAT (why)" per check, and the JOIN's
 * param.ud ("ud: qp_num ... flow_label N"); exit 0 if all held, 1 otherwise.
 * -U: stop after that line (to compare param.ud with the kernel's rdma_cm,
 * whose answers to the later checks differ).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static int failed;

static void check(int ok, const char* what, const char* why) {
  if (ok) {
    printf("ok: %s\n", what);
  } else {
    printf("FAIL: %s (%s)\n", what, why);
    failed = 1;
  }
  fflush(stdout);
}

/* Whether NETDEV holds the IPv4 group in /proc/net/igmp. */
static int in_igmp(const char* netdev, struct in_addr group) {
  char line[256], dev[64] = "";
  FILE* f = fopen("/proc/net/igmp", "r");
  int found = 0;

  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    unsigned idx, hex;

    if (line[0] != '\t') {
      if (sscanf(line, "%u %63s", &idx, dev) != 2) dev[0] = 0;
      continue;
    }
    if (sscanf(line, " %x", &hex) == 1 && strcmp(dev, netdev) == 0 && hex == group.s_addr)
      found = 1;
  }
  fclose(f);
  return found;
}

static int expect_fail(int ret, int err, const char* what) {
  char why[96];

  snprintf(why, sizeof why, "returned %d errno %d (%s), want -1 errno %d", ret, ret ? errno : 0,
           ret ? strerror(errno) : "-", err);
  check(ret == -1 && errno == err, what, why);
  return 0;
}

static struct rdma_cm_event* next_event(struct rdma_event_channel* ch, int type, const char* what) {
  struct rdma_cm_event* ev = NULL;
  char why[96];

  if (rdma_get_cm_event(ch, &ev)) {
    snprintf(why, sizeof why, "rdma_get_cm_event: %s", strerror(errno));
    check(0, what, why);
    return NULL;
  }
  snprintf(why, sizeof why, "got %s status %d", rdma_event_str(ev->event), ev->status);
  check((int)ev->event == type && ev->status == 0, what, why);
  return ev;
}

int main(int argc, char** argv) {
  const char *addr = NULL, *netdev = NULL, *g1 = NULL, *g2 = NULL;
  struct sockaddr_in src = {.sin_family = AF_INET}, grp = {.sin_family = AF_INET},
                     grp2 = {.sin_family = AF_INET};
  struct rdma_event_channel* ch;
  struct rdma_cm_id *tcp, *unbound, *ud, *sync_id;
  struct rdma_cm_event* ev;
  struct ibv_qp_init_attr qa;
  char why[128];
  int op, ctx = 0, ud_only = 0;

  while ((op = getopt(argc, argv, "b:n:m:M:U")) != -1) {
    switch (op) {
      case 'b':
        addr = optarg;
        break;
      case 'n':
        netdev = optarg;
        break;
      case 'm':
        g1 = optarg;
        break;
      case 'M':
        g2 = optarg;
        break;
      case 'U':
        ud_only = 1;
        break;
      default:
        return 2;
    }
  }
  if (!addr || !netdev || !g1 || !g2 || inet_pton(AF_INET, addr, &src.sin_addr) != 1 ||
      inet_pton(AF_INET, g1, &grp.sin_addr) != 1 || inet_pton(AF_INET, g2, &grp2.sin_addr) != 1) {
    fprintf(stderr, "usage: mc_probe -b ADDR -n NETDEV -m GROUP4 -M GROUP4B\n");
    return 2;
  }
  ch = rdma_create_event_channel();
  if (!ch) {
    perror("rdma_create_event_channel");
    return 1;
  }

  /* Refusals: a TCP id, a UD id with no device. */
  if (rdma_create_id(ch, &tcp, NULL, RDMA_PS_TCP) || rdma_bind_addr(tcp, (struct sockaddr*)&src)) {
    perror("tcp id");
    return 1;
  }
  expect_fail(rdma_join_multicast(tcp, (struct sockaddr*)&grp, NULL), EINVAL,
              "a TCP id's join is EINVAL");
  rdma_destroy_id(tcp);
  if (rdma_create_id(ch, &unbound, NULL, RDMA_PS_UDP)) {
    perror("ud id");
    return 1;
  }
  expect_fail(rdma_join_multicast(unbound, (struct sockaddr*)&grp, NULL), EINVAL,
              "an unbound UD id's join is EINVAL");
  rdma_destroy_id(unbound);

  /* A UD id resolved to the group, with a QP: the join and its event. */
  if (rdma_create_id(ch, &ud, NULL, RDMA_PS_UDP) ||
      rdma_resolve_addr(ud, (struct sockaddr*)&src, (struct sockaddr*)&grp, 2000)) {
    perror("ud id resolve");
    return 1;
  }
  ev = next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, "the group's address resolves");
  if (!ev) return 1;
  rdma_ack_cm_event(ev);
  memset(&qa, 0, sizeof qa);
  qa.qp_type = IBV_QPT_UD;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  if (rdma_create_qp(ud, NULL, &qa)) {
    perror("rdma_create_qp");
    return 1;
  }
  check(rdma_join_multicast(ud, (struct sockaddr*)&grp, &ctx) == 0, "the join", strerror(errno));
  ev = next_event(ch, RDMA_CM_EVENT_MULTICAST_JOIN, "MULTICAST_JOIN");
  if (ev) {
    struct rdma_ud_param* p = &ev->param.ud;
    struct in6_addr want = {.s6_addr = {[10] = 0xff, [11] = 0xff}};

    memcpy(&want.s6_addr[12], &grp.sin_addr, 4);
    snprintf(why, sizeof why, "qp_num 0x%x qkey 0x%x global %d private_data %p (want %p)",
             p->qp_num, p->qkey, p->ah_attr.is_global, p->private_data, (void*)&ctx);
    check(p->qp_num == 0xffffff && p->qkey == 0x01234567 && p->ah_attr.is_global &&
              p->private_data == &ctx && p->private_data_len == 0,
          "param.ud: qp_num 0xffffff, RDMA_UDP_QKEY, a GRH, the context", why);
    check(memcmp(p->ah_attr.grh.dgid.raw, &want, 16) == 0, "the MGID is ::ffff:GROUP",
          "another dgid");
    printf(
        "ud: qp_num 0x%x qkey 0x%x dlid %u sl %u static_rate %u port %u is_global %u "
        "sgid_index %u hop_limit %u traffic_class %u flow_label %u\n",
        p->qp_num, p->qkey, p->ah_attr.dlid, p->ah_attr.sl, p->ah_attr.static_rate,
        p->ah_attr.port_num, p->ah_attr.is_global, p->ah_attr.grh.sgid_index,
        p->ah_attr.grh.hop_limit, p->ah_attr.grh.traffic_class, p->ah_attr.grh.flow_label);
    fflush(stdout);
    if (ud_only) _exit(failed);
    rdma_ack_cm_event(ev);
  }
  check(in_igmp(netdev, grp.sin_addr) == 1, "the netdev holds the IP group while joined",
        "not in /proc/net/igmp");
  expect_fail(rdma_join_multicast(ud, (struct sockaddr*)&grp, NULL), EADDRINUSE,
              "a second join of the group is EADDRINUSE");
  expect_fail(rdma_leave_multicast(ud, (struct sockaddr*)&grp2), EADDRNOTAVAIL,
              "leaving a group not joined is EADDRNOTAVAIL");
  /* Destroyed while attached (the library detaches it first; its log must
   * name no failed ibv_destroy_qp), then the id without a leave. */
  rdma_destroy_qp(ud);
  check(ud->qp == NULL, "rdma_destroy_qp of an attached QP", "id->qp still set");
  rdma_destroy_id(ud);
  check(in_igmp(netdev, grp.sin_addr) == 0, "rdma_destroy_id without a leave drops the IP group",
        "still in /proc/net/igmp");

  /* A synchronous id: the call returns with its event; then a leave. */
  if (rdma_create_id(NULL, &sync_id, NULL, RDMA_PS_UDP) ||
      rdma_bind_addr(sync_id, (struct sockaddr*)&src)) {
    perror("sync id");
    return 1;
  }
  check(rdma_join_multicast(sync_id, (struct sockaddr*)&grp2, NULL) == 0 && sync_id->event &&
            sync_id->event->event == RDMA_CM_EVENT_MULTICAST_JOIN,
        "a synchronous bound id's join returns with MULTICAST_JOIN", strerror(errno));
  check(in_igmp(netdev, grp2.sin_addr) == 1, "its IP group is held", "not in /proc/net/igmp");
  check(rdma_leave_multicast(sync_id, (struct sockaddr*)&grp2) == 0, "its leave", strerror(errno));
  check(in_igmp(netdev, grp2.sin_addr) == 0, "the leave drops the IP group",
        "still in /proc/net/igmp");
  rdma_destroy_id(sync_id);
  rdma_destroy_event_channel(ch);
  printf("%s\n", failed ? "FAIL" : "PASS");
  return failed;
}
