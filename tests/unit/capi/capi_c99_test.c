// SPDX-License-Identifier: MIT
/* The C API from C: <qpconnect/qpconnect.h> compiles as strict C99 (this file
 * is built with -std=c99 -Wall -Wextra -pedantic -Werror), and what needs no
 * RDMA device works: the version string, status and name strings, error
 * objects, option defaults, and NULL arguments refused with a status and a
 * message instead of a crash. Prints "N passed, M failed"; exits 1 on any
 * failure. */
#include <qpconnect/qpconnect.h>
#include <stdio.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (cond) {                                                          \
      ++passed;                                                          \
    } else {                                                             \
      ++failed;                                                          \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                    \
  } while (0)

#define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0)

static int contains(const char* haystack, const char* needle) {
  return strstr(haystack, needle) != NULL;
}

static void version(void) {
  CHECK(qpc_version_string() != NULL);
  CHECK_STR(qpc_version_string(), QPC_EXPECTED_VERSION);
}

static void names(void) {
  CHECK_STR(qpc_status_name(QPC_OK), "ok");
  CHECK_STR(qpc_status_name(QPC_ERR_INVALID_ARGUMENT), "invalid-argument");
  CHECK_STR(qpc_status_name(QPC_ERR_NOT_FOUND), "not-found");
  CHECK_STR(qpc_status_name(QPC_ERR_TIMEOUT), "timeout");
  CHECK_STR(qpc_status_name(QPC_ERR_PROTOCOL), "protocol");
  CHECK_STR(qpc_status_name(QPC_ERR_INCOMPATIBLE), "incompatible");
  CHECK_STR(qpc_status_name(QPC_ERR_VERBS), "verbs");
  CHECK_STR(qpc_status_name(QPC_ERR_IO), "io");
  CHECK_STR(qpc_status_name(QPC_ERR_AUTH), "auth");
  CHECK_STR(qpc_status_name(QPC_ERR_TRAFFIC), "traffic");
  CHECK_STR(qpc_status_name(QPC_ERR_NO_MEMORY), "no-memory");
  CHECK_STR(qpc_status_name(QPC_ERR_INTERNAL), "internal");
  CHECK_STR(qpc_status_name((qpc_status)99), "unknown");
  CHECK_STR(qpc_phase_name(QPC_PHASE_OPEN), "open");
  CHECK_STR(qpc_phase_name(QPC_PHASE_BARRIER), "barrier");
  CHECK_STR(qpc_phase_name((qpc_phase)9), "unknown");
  CHECK_STR(qpc_severity_name(QPC_SEVERITY_ERROR), "error");
  CHECK_STR(qpc_severity_name(QPC_SEVERITY_INFO), "info");
  CHECK_STR(qpc_transport_name(QPC_TRANSPORT_UD), "ud");
  CHECK_STR(qpc_transport_name((qpc_transport)0), "unknown");
  CHECK_STR(qpc_log_level_name(QPC_LOG_WARNING), "warning");
  CHECK_STR(qpc_log_level_name((qpc_log_level)7), "unknown");
}

static void defaults(void) {
  qpc_open_options o;
  qpc_adopt_options a;
  qpc_connect_options c;
  qpc_traffic_options t;
  qpc_exchanger_options x;
  memset(&o, 0xff, sizeof o);
  qpc_open_options_init(&o);
  CHECK(o.device == NULL && o.port == 1 && o.gid_index == -1 && o.num_qps == 1);
  CHECK(o.transport == QPC_TRANSPORT_RC && o.message_size == 4096 && o.rx_depth == 8);
  CHECK(o.psn == -1 && o.pkey_value == -1 && o.mtu == 0 && o.qkey == 0x11111111u);
  qpc_adopt_options_init(&a);
  CHECK(a.port == 1 && a.gid_index == -1 && a.access_flags == 0 && a.psn == -1);
  qpc_connect_options_init(&c);
  CHECK(c.timeout_ms == 30000 && c.validate == 1 && c.barrier_stage == NULL);
  CHECK(c.retry_cnt == 7 && c.rnr_retry == 7 && c.on_step == NULL);
  qpc_traffic_options_init(&t);
  CHECK(t.iters == 1000 && t.size == 0 && t.rdma == 1);
  qpc_exchanger_options_init(&x);
  CHECK(x.psk == NULL && x.psk_file == NULL && x.max_payload_bytes == 0);
  /* init on NULL is a no-op */
  qpc_open_options_init(NULL);
  qpc_connect_options_init(NULL);
}

static void null_arguments(void) {
  qpc_error* err = NULL;
  qpc_connector* c = NULL;
  qpc_exchanger* x = NULL;
  qpc_channel ch;
  qpc_finding f;
  qpc_mr_desc mr;
  qpc_timings t;
  char* json = NULL;
  void* addr = NULL;

  CHECK(qpc_connector_open(NULL, NULL, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_error_status(err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(contains(qpc_error_message(err), "qpc_connector_open"));
  CHECK(contains(qpc_error_message(err), "out is NULL"));
  CHECK_STR(qpc_error_attribute(err), "out");
  CHECK_STR(qpc_error_operation(err), "qpc_connector_open");
  CHECK(qpc_error_errno(err) == 0);

  /* The same variable serves the next call: the old error is replaced. */
  CHECK(qpc_connector_adopt(NULL, 1, NULL, &c, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(contains(qpc_error_message(err), "qps is NULL"));
  CHECK(c == NULL);

  /* A NULL error pointer is allowed: the status alone tells. */
  CHECK(qpc_connector_connect(NULL, NULL, NULL, NULL) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_exchanger_tcp_client(NULL, 1, NULL, &x, NULL) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_exchanger_from_channel(NULL, NULL, &x, &err) == QPC_ERR_INVALID_ARGUMENT);
  memset(&ch, 0, sizeof ch);
  CHECK(qpc_exchanger_from_channel(&ch, NULL, &x, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(contains(qpc_error_message(err), "channel->send is NULL"));
  CHECK(x == NULL);
  CHECK(qpc_exchanger_barrier(NULL, "x", 10, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_exchanger_exchange_json(NULL, "{}", 10, &json, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(json == NULL);
  CHECK(qpc_connector_finding(NULL, 0, &f, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_remote_mr(NULL, 0, &mr, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_local_json(NULL, &json, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_buffer(NULL, 0, QPC_BUFFER_SEND, 0, &addr, NULL, &err) ==
        QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_post_send(NULL, 0, 1, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_post_recv(NULL, 0, 0, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_connector_post_rdma(NULL, 0, QPC_RDMA_WRITE, 1, 0, 0, &err) ==
        QPC_ERR_INVALID_ARGUMENT);
  CHECK(qpc_run_traffic(NULL, QPC_ROLE_CLIENT, NULL, NULL, &err) == QPC_ERR_INVALID_ARGUMENT);

  /* Accessors answer NULL handles with zeroes. */
  CHECK(qpc_connector_num_qps(NULL) == 0);
  CHECK(qpc_connector_qp(NULL, 0) == NULL);
  CHECK(qpc_connector_ah(NULL, 0) == NULL);
  CHECK(qpc_connector_remote_qpn(NULL, 0) == 0);
  CHECK(qpc_connector_remote_qkey(NULL) == 0);
  CHECK(qpc_connector_connected(NULL) == 0);
  CHECK(qpc_connector_reached(NULL) == QPC_PHASE_OPEN);
  CHECK(qpc_connector_finding_count(NULL) == 0);
  CHECK(qpc_connector_send_cq(NULL) == NULL);
  CHECK(qpc_connector_message_size(NULL) == 0);
  CHECK(qpc_exchanger_tcp_port(NULL) == 0);
  memset(&t, 0xff, sizeof t);
  qpc_connector_timings(NULL, &t);
  CHECK(t.open_ns == 0 && t.barrier_ns == 0);
  qpc_connector_timings(NULL, NULL);

  /* Error accessors and frees accept NULL. */
  CHECK(qpc_error_status(NULL) == QPC_OK);
  CHECK_STR(qpc_error_message(NULL), "");
  CHECK_STR(qpc_error_detail(NULL), "");
  CHECK(qpc_error_errno(NULL) == 0);
  qpc_exchanger_abort(NULL, "x", 10);
  qpc_exchanger_free(NULL);
  qpc_connector_free(NULL);
  qpc_string_free(NULL);
  qpc_error_free(err);
  qpc_error_free(NULL);
}

static void bad_options(void) {
  qpc_error* err = NULL;
  qpc_connector* c = NULL;
  qpc_open_options o;
  qpc_open_options_init(&o);
  o.mtu = 1000;
  CHECK(qpc_connector_open(&o, &c, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK_STR(qpc_error_attribute(err), "mtu");
  qpc_open_options_init(&o);
  o.psn = 1 << 24;
  CHECK(qpc_connector_open(&o, &c, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK_STR(qpc_error_attribute(err), "psn");
  qpc_open_options_init(&o);
  o.transport = (qpc_transport)9;
  CHECK(qpc_connector_open(&o, &c, &err) == QPC_ERR_INVALID_ARGUMENT);
  CHECK_STR(qpc_error_attribute(err), "transport");
  CHECK(c == NULL);
  qpc_error_free(err);
}

static void log_handler(void* user, qpc_log_level level, const char* message) {
  (void)user;
  (void)level;
  (void)message;
}

static void log_hook(void) {
  qpc_set_log_handler(log_handler, NULL, QPC_LOG_DEBUG);
  qpc_set_log_handler(NULL, NULL, QPC_LOG_WARNING);
  CHECK(1);
}

int main(void) {
  version();
  names();
  defaults();
  null_arguments();
  bad_options();
  log_hook();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
