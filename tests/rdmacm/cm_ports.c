// SPDX-License-Identifier: MIT
/*
 * cm_ports: an rdma_cm program of ours that binds and listens ids as its
 * arguments say and prints what each call returned, so that a test can
 * compare rdma_cm's port rules (REUSEADDR, AFONLY, wildcards of either
 * family; issue 39) natively and through a librdmacm-compatible library. No
 * connection is made. Plain C against librdmacm's API only.
 *
 *   cm_ports STEP...
 *     [FLAGS]bind:ADDR:PORT  a new id (RDMA_PS_TCP), its options, then
 *                            rdma_bind_addr; ADDR is numeric, IPv6 in
 *                            brackets ([::]:7300). FLAGS: r REUSEADDR 1,
 *                            o AFONLY 1, d AFONLY 0 (dual stack)
 *     listen:N               rdma_listen on the id of step N
 *     destroy:N              rdma_destroy_id on the id of step N
 *
 * Output (stdout), one line per step, without addresses (the same steps run
 * on other addresses natively and through the library):
 *   step K bind: ok | EADDRINUSE | EADDRNOTAVAIL | ... (the errno's name)
 *   step K listen N: ok | ...
 * Exit 0 when every step ran (whatever it returned), 1 on bad arguments or
 * a setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

enum { MAX_STEPS = 32 };

static const char* errno_name(int e) {
  const char* name = strerrorname_np(e);
  return name ? name : "unknown-errno";
}

static int parse_addr(const char* text, struct sockaddr_storage* ss) {
  char host[128], *port;
  struct addrinfo hints, *res;
  const char* h = text;
  size_t n;
  if (text[0] == '[') {
    const char* end = strchr(text, ']');
    if (!end || end[1] != ':') return -1;
    n = (size_t)(end - text - 1);
    h = text + 1;
    port = (char*)end + 2;
  } else {
    port = strrchr(text, ':');
    if (!port) return -1;
    n = (size_t)(port - text);
    port++;
  }
  if (n >= sizeof host) return -1;
  memcpy(host, h, n);
  host[n] = '\0';
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  if (getaddrinfo(host, port, &hints, &res)) return -1;
  memset(ss, 0, sizeof *ss);
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return 0;
}

int main(int argc, char** argv) {
  struct rdma_cm_id* ids[MAX_STEPS + 1] = {0};
  struct rdma_event_channel* ch;
  int k;
  if (argc < 2 || argc - 1 > MAX_STEPS) {
    fprintf(stderr, "usage: %s [r|o|d]bind:ADDR:PORT | listen:N | destroy:N ...\n", argv[0]);
    return 1;
  }
  ch = rdma_create_event_channel();
  if (!ch) {
    printf("rdma_create_event_channel failed: %s\n", strerror(errno));
    return 1;
  }
  for (k = 1; k < argc; k++) {
    const char* step = argv[k];
    const char* bind = strstr(step, "bind:");
    if (bind) {
      struct sockaddr_storage ss;
      const char* f;
      int one = 1, zero = 0, r;
      if (parse_addr(bind + 5, &ss)) {
        fprintf(stderr, "step %d: bad address in %s\n", k, step);
        return 1;
      }
      if (rdma_create_id(ch, &ids[k], NULL, RDMA_PS_TCP)) {
        printf("step %d bind: rdma_create_id failed: %s\n", k, errno_name(errno));
        return 1;
      }
      for (f = step; f < bind; f++) {
        int name = *f == 'r' ? RDMA_OPTION_ID_REUSEADDR : RDMA_OPTION_ID_AFONLY;
        int* val = *f == 'd' ? &zero : &one;
        if (*f != 'r' && *f != 'o' && *f != 'd') {
          fprintf(stderr, "step %d: unknown flag %c\n", k, *f);
          return 1;
        }
        if (rdma_set_option(ids[k], RDMA_OPTION_ID, name, val, sizeof *val))
          printf("step %d option %c: %s\n", k, *f, errno_name(errno));
      }
      r = rdma_bind_addr(ids[k], (struct sockaddr*)&ss);
      printf("step %d bind: %s\n", k, r ? errno_name(errno) : "ok");
    } else if (strncmp(step, "listen:", 7) == 0 || strncmp(step, "destroy:", 8) == 0) {
      int listen = step[0] == 'l';
      int n = atoi(strchr(step, ':') + 1), r;
      if (n < 1 || n >= k || !ids[n]) {
        fprintf(stderr, "step %d: no id of step %d\n", k, n);
        return 1;
      }
      r = listen ? rdma_listen(ids[n], 4) : rdma_destroy_id(ids[n]);
      if (!listen) ids[n] = NULL;
      printf("step %d %s %d: %s\n", k, listen ? "listen" : "destroy", n,
             r ? errno_name(errno) : "ok");
    } else {
      fprintf(stderr, "step %d: unknown step %s\n", k, step);
      return 1;
    }
    fflush(stdout);
  }
  for (k = 1; k < argc; k++)
    if (ids[k]) rdma_destroy_id(ids[k]);
  rdma_destroy_event_channel(ch);
  return 0;
}
