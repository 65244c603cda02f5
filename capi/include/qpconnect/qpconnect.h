// SPDX-License-Identifier: MIT
/* qpconnect's C API: connect RDMA queue pairs by hand, without librdmacm, from
 * C or any language with a C FFI.
 *
 * It wraps the C++ qpconnect::Connector (qpconnect/connector.h) and the
 * exchangers (qpconnect/oob/...). docs/embedding.md walks through it with
 * the examples in examples/.
 *
 *   qpc_connector* c = NULL;  qpc_exchanger* x = NULL;  qpc_error* err = NULL;
 *   qpc_open_options o;  qpc_open_options_init(&o);  o.device = "mlx5_0";
 *   if (qpc_connector_open(&o, &c, &err) != QPC_OK ||
 *       qpc_exchanger_tcp_client("server", 18515, NULL, &x, &err) != QPC_OK ||
 *       qpc_connector_connect(c, x, NULL, &err) != QPC_OK)
 *     fprintf(stderr, "%s\n", qpc_error_message(err));
 *   ... qpc_connector_qp(c, 0) is an ordinary struct ibv_qp* at RTS ...
 *   qpc_exchanger_free(x);  qpc_connector_free(c);  qpc_error_free(err);
 *
 * Two modes, as in C++:
 *   owning   qpc_connector_open() creates the device context, PD, CQs, QPs
 *            and one registered buffer, moves the QPs to INIT and posts
 *            receives. The connector owns all of it; qpc_connector_buffer(),
 *            qpc_connector_post_*(), the CQ accessors and qpc_run_traffic()
 *            give the data path.
 *   adopted  qpc_connector_adopt() takes QPs the caller created (its PD, CQs,
 *            queue sizes; RC, UC or UD) and optional MR descriptors to publish.
 *            The caller keeps owning them; the connector owns only the UD
 *            address handles it creates while connecting.
 * In both modes qpc_connector_qp(c, i) is the i-th struct ibv_qp*, and the
 * peer's QP i is its partner.
 *
 * Errors. Every fallible function returns a qpc_status (QPC_OK is 0) and takes
 * a last argument `qpc_error** error`, which may be NULL. On failure, when
 * `error` is not NULL, *error receives a new error object describing it (an
 * error object already in *error is freed and replaced, so one variable can
 * serve a sequence of calls); the caller frees it with qpc_error_free(). On
 * success *error is left unchanged. No C++ exception crosses this API: one
 * escaping the library is caught and reported as QPC_ERR_NO_MEMORY or
 * QPC_ERR_INTERNAL. A NULL where a handle or an output pointer is required is
 * QPC_ERR_INVALID_ARGUMENT, never a crash.
 *
 * Ownership. Handles (qpc_connector, qpc_exchanger, qpc_error) belong to the
 * caller, who frees each with its *_free function (NULL is accepted). Strings
 * and structures returned by accessors belong to the handle they came from and
 * stay valid until that handle is freed, unless a function says otherwise.
 * Strings the library allocates for the caller (JSON) are freed with
 * qpc_string_free().
 *
 * Thread-safety. Distinct handles may be used from distinct threads at once.
 * One handle is used by one thread at a time (the caller serializes). Freeing
 * a handle while another thread uses it is undefined. The log handler and the
 * status/name functions may be used from any thread. The connector calls the
 * step callback, and an exchanger calls its channel callbacks, on the thread
 * that called into the library.
 *
 * The header is C99 (and C++) clean and needs no verbs header: the verbs
 * types appear only as pointers to incomplete structs. Include
 * <infiniband/verbs.h> to use them.
 *
 * The path MTU has one knob: the `mtu` of qpc_open_options and of
 * qpc_adopt_options (as qp-connect's and qp-mesh's -m). 0 negotiates; a size
 * forces it: the description announces it as forced, this side programs it
 * and a peer that negotiates follows it.
 *
 * ABI. Before 1.0 a structure may change between versions; rebuild against
 * the header of the library you link. 0.1.0: qpc_connect_options has no
 * `mtu` any more (it forced the plan's MTU without announcing it, a second
 * knob beside the open and adopt options' `mtu`, which now do both).
 */
#ifndef QPCONNECT_QPCONNECT_H_
#define QPCONNECT_QPCONNECT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_ah;
struct ibv_cq;
struct ibv_qp;

/* ------------------------------------------------------------------------ */
/* Version                                                                  */

/* The library's version, "MAJOR.MINOR.PATCH" (CMake's project version). A
 * static string; thread-safe. */
const char* qpc_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */

/* Mirrors qpconnect::ErrorCode (qpconnect/result.h), plus two codes for C++
 * failures caught at the boundary. Values are stable. */
typedef enum qpc_status {
  QPC_OK = 0,
  QPC_ERR_INVALID_ARGUMENT = 1, /* a caller-supplied value cannot be used */
  QPC_ERR_NOT_FOUND = 2,        /* device, port, GID, P_Key, file or peer missing */
  QPC_ERR_TIMEOUT = 3,          /* a deadline passed */
  QPC_ERR_PROTOCOL = 4,         /* a peer message failed to decode, or the peer aborted */
  QPC_ERR_INCOMPATIBLE = 5,     /* both sides well-formed but cannot be connected */
  QPC_ERR_VERBS = 6,            /* a libibverbs call failed (errno kept) */
  QPC_ERR_IO = 7,               /* an OS I/O call or a channel callback failed */
  QPC_ERR_AUTH = 8,             /* PSK integrity check failed */
  QPC_ERR_TRAFFIC = 9,          /* a work completion failed or data did not match */
  QPC_ERR_NO_MEMORY = 10,       /* an allocation failed */
  QPC_ERR_INTERNAL = 11         /* an unexpected failure inside the library (a bug) */
} qpc_status;

/* Stable lower-case name: "ok", "invalid-argument", "not-found", "timeout",
 * "protocol", "incompatible", "verbs", "io", "auth", "traffic" (the C++
 * ErrorCodeName), "no-memory", "internal"; "unknown" for any other value.
 * Static string; thread-safe. */
const char* qpc_status_name(qpc_status status);

/* What went wrong: the status, the failed operation, the attribute at fault,
 * the errno of the OS or verbs call, and a detail line. Opaque. */
typedef struct qpc_error qpc_error;

/* The status of `error`; QPC_OK for NULL. */
qpc_status qpc_error_status(const qpc_error* error);
/* The full one-line text (qpconnect::Error::ToString()), e.g.
 * "ibv_modify_qp INIT->RTR: ... [attribute path_mtu] (errno 22: Invalid
 * argument) [verbs]"; "" for NULL. Owned by `error`. */
const char* qpc_error_message(const qpc_error* error);
/* The parts of the message; "" when absent or for NULL. Owned by `error`. */
const char* qpc_error_operation(const qpc_error* error);
const char* qpc_error_attribute(const qpc_error* error);
const char* qpc_error_detail(const qpc_error* error);
/* The errno of the failed OS or verbs call; 0 when none failed, or NULL. */
int qpc_error_errno(const qpc_error* error);
/* Frees `error`; NULL is accepted. */
void qpc_error_free(qpc_error* error);

/* Frees a string this library allocated for the caller; NULL is accepted. */
void qpc_string_free(char* s);

/* ------------------------------------------------------------------------ */
/* Log hook (maps to qpconnect::SetLogHandler)                              */

typedef enum qpc_log_level {
  QPC_LOG_DEBUG = 0,
  QPC_LOG_INFO = 1,
  QPC_LOG_WARNING = 2,
  QPC_LOG_ERROR = 3
} qpc_log_level;

/* "debug", "info", "warning", "error"; "unknown" otherwise. */
const char* qpc_log_level_name(qpc_log_level level);

/* `message` is NUL-terminated and valid only during the call. */
typedef void (*qpc_log_fn)(void* user, qpc_log_level level, const char* message);

/* The library writes nothing to stdout/stderr. Messages that have no caller
 * to return to (a failed destroy, a rejected client of a listening server)
 * go to this handler; messages below `min_level` are dropped. NULL `fn`
 * restores the silent default. The handler may be called from any thread
 * that is inside the library, possibly from several at once, with no library
 * lock held: it must be thread-safe, and `user` must stay valid until the
 * handler is replaced. Thread-safe. */
void qpc_set_log_handler(qpc_log_fn fn, void* user, qpc_log_level min_level);

/* ------------------------------------------------------------------------ */
/* Exchangers: how the two sides swap descriptions                          */

/* Swaps endpoint descriptions with the peer, then passes barriers. Every
 * exchanger speaks the same framed protocol (docs/oob.md) with optional
 * pre-shared-key integrity. Opaque. */
typedef struct qpc_exchanger qpc_exchanger;

typedef struct qpc_exchanger_options {
  /* Pre-shared key: `psk_len` bytes at `psk`, or the key file `psk_file`
   * (trailing whitespace trimmed; must not be readable by group or others).
   * Both sides need the same key, or neither. At most one of the two. */
  const void* psk;
  size_t psk_len;
  const char* psk_file;
  /* Cap on a received frame's payload; 0: the library's default (16 MiB). */
  uint32_t max_payload_bytes;
  /* Byte channel only: the name errors give the channel ("receive from
   * <name>: ...") [NULL: "channel"]. */
  const char* channel_name;
  /* Byte channel only. 0 [default]: after the hellos, the side whose nonce
   * sorts lower sends its description first while the other reads, so
   * descriptions of any size pass a channel that blocks until the peer reads
   * (a socket, a pipe). 1: both send, then read; only for a channel whose
   * send completes without the peer reading (a mailbox, a key-value store).
   * Both sides may choose differently: the wire is the same. */
  int both_send_first;
} qpc_exchanger_options;

/* Fills `options` with the defaults (no PSK, default cap). */
void qpc_exchanger_options_init(qpc_exchanger_options* options);

/* The byte channel: a reliable, ordered byte stream to the peer that the
 * embedding program already has (a socket of its own, an MPI pair, an RPC
 * connection, a pipe pair). The library writes its frames into it and reads
 * the peer's; it does the framing, so the channel need not keep message
 * boundaries. This is qpconnect::oob::ByteChannel (qpconnect/oob/channel.h)
 * as C callbacks; the protocol is the TCP exchanger's, byte for byte.
 *
 * send: hands all `len` bytes at `buf` to the channel (each call carries one
 *   frame), blocking if it must but returning within `timeout_ms`. Returns 0
 *   once every byte is handed over; otherwise an errno value: ETIMEDOUT when
 *   the time ran out (-> QPC_ERR_TIMEOUT), anything else (EPIPE, ECONNRESET,
 *   ...) -> QPC_ERR_IO with that errno. A negative return is read as -errno.
 *   It must complete for a message of up to 2048 bytes while the peer is
 *   itself inside send (both sides send hellos and barriers before reading):
 *   any socket or pipe buffers that much.
 * receive: waits at most `timeout_ms` for the peer's next bytes and copies
 *   between 1 and `max` of them into `buf`; returns how many. Bytes beyond
 *   `max` stay in the channel for the next call. Returns 0 at end of stream
 *   (the peer closed: QPC_ERR_IO), or -errno: -ETIMEDOUT when nothing arrived
 *   in time (-> QPC_ERR_TIMEOUT), any other -> QPC_ERR_IO.
 * `timeout_ms` is what is left of the call's deadline (>= 0, rounded up).
 * The exchanger calls them only from the thread that called into it, one at
 * a time, never concurrently; `user` is passed through. They must not call
 * into the same exchanger. After a failed exchange the stream may hold part
 * of a frame: exchange again only over a channel re-established by the
 * caller. */
typedef struct qpc_channel {
  int (*send)(void* user, const void* buf, size_t len, int timeout_ms);
  ssize_t (*receive)(void* user, void* buf, size_t max, int timeout_ms);
  void* user;
} qpc_channel;

/* An exchanger over `channel` (copied; what `channel->user` refers to must
 * outlive the exchanger, which never closes it). `options` may be NULL.
 * QPC_ERR_INVALID_ARGUMENT: NULL channel or callback, NULL `out`, both or a
 * bad PSK, a bad cap. QPC_ERR_NOT_FOUND / QPC_ERR_IO: the PSK file. */
qpc_status qpc_exchanger_from_channel(const qpc_channel* channel,
                                      const qpc_exchanger_options* options, qpc_exchanger** out,
                                      qpc_error** error);

/* A TCP server that binds `bind_address` (NULL or "": any address) and
 * `port` (0: an ephemeral port, see qpc_exchanger_tcp_port()) at once; its
 * first exchange accepts one client. QPC_ERR_INVALID_ARGUMENT, QPC_ERR_NOT_FOUND
 * (the bind address does not resolve), QPC_ERR_IO (bind/listen failed). */
qpc_status qpc_exchanger_tcp_server(const char* bind_address, uint16_t port,
                                    const qpc_exchanger_options* options, qpc_exchanger** out,
                                    qpc_error** error);

/* A TCP client of `host`:`port`; it connects during the exchange, retrying a
 * refused connection until the deadline. QPC_ERR_INVALID_ARGUMENT (NULL or
 * empty host, options). */
qpc_status qpc_exchanger_tcp_client(const char* host, uint16_t port,
                                    const qpc_exchanger_options* options, qpc_exchanger** out,
                                    qpc_error** error);

/* TCP: the server's bound port, or the client's server port; 0 for other
 * exchangers or NULL. */
uint16_t qpc_exchanger_tcp_port(const qpc_exchanger* exchanger);

/* Exchanges descriptions given as JSON (the wire format's JSON mapping,
 * docs/wire-format.md; what qpc_connector_local_json() returns), for programs
 * that describe their endpoints themselves. On success *remote_json is the
 * peer's description as indented JSON, freed with qpc_string_free().
 * QPC_ERR_INVALID_ARGUMENT (NULL argument), QPC_ERR_PROTOCOL (the local JSON
 * does not decode), then the exchange's: QPC_ERR_TIMEOUT, QPC_ERR_PROTOCOL,
 * QPC_ERR_INCOMPATIBLE, QPC_ERR_AUTH, QPC_ERR_IO. */
qpc_status qpc_exchanger_exchange_json(qpc_exchanger* exchanger, const char* local_json,
                                       int timeout_ms, char** remote_json, qpc_error** error);

/* Tells the peer this side reached `stage` (e.g. "done" after checking its
 * traffic) and waits until the peer says the same, within `timeout_ms`.
 * REQUIRES: a successful exchange on `exchanger` (a connect or
 * qpc_exchanger_exchange_json). QPC_ERR_PROTOCOL when the peer names another
 * stage or aborted; otherwise as the exchange. */
qpc_status qpc_exchanger_barrier(qpc_exchanger* exchanger, const char* stage, int timeout_ms,
                                 qpc_error** error);

/* Tells the peer this side gives up, best effort within `timeout_ms`: the
 * peer's pending or next exchange or barrier fails with QPC_ERR_PROTOCOL
 * "the peer aborted: <reason>" instead of waiting for its deadline. Reports
 * nothing. NULL exchanger or reason: does nothing. */
void qpc_exchanger_abort(qpc_exchanger* exchanger, const char* reason, int timeout_ms);

/* Cancels the exchanger from any thread, also while another thread is
 * inside an exchange, a barrier or a connect on it (the one call on an
 * exchanger that may overlap another). The pending call, or the next, fails
 * within about 100 ms with QPC_ERR_IO and qpc_error_errno() == ECANCELED,
 * detail "cancelled: <reason>" (a timeout is QPC_ERR_TIMEOUT); where a
 * session is under way the peer is first sent an abort with `reason`, so
 * its call fails with QPC_ERR_PROTOCOL "the peer aborted: <reason>". Final:
 * every later call fails the same way; qpc_exchanger_abort() and
 * qpc_exchanger_free() still work. Over a byte channel a wait inside the
 * channel's receive() ends once it returns (it is given at most 100 ms at a
 * time); a send() blocked on the peer ends only at its own timeout.
 * NULL exchanger or reason: does nothing. */
void qpc_exchanger_cancel(qpc_exchanger* exchanger, const char* reason);

/* Frees the exchanger (a TCP exchanger closes its socket); NULL is accepted.
 * Does not touch a byte channel's `user`. */
void qpc_exchanger_free(qpc_exchanger* exchanger);

/* ------------------------------------------------------------------------ */
/* Connector                                                                */

typedef struct qpc_connector qpc_connector;

typedef enum qpc_transport {
  QPC_TRANSPORT_RC = 1,
  QPC_TRANSPORT_UC = 2,
  QPC_TRANSPORT_UD = 3
} qpc_transport;

/* "rc", "uc", "ud"; "unknown" otherwise. */
const char* qpc_transport_name(qpc_transport transport);

typedef enum qpc_gid_family { QPC_GID_IPV4 = 1, QPC_GID_IPV6 = 2 } qpc_gid_family;

/* Owning mode. Defaults from qpc_open_options_init() in brackets. */
typedef struct qpc_open_options {
  const char* device;         /* device name [NULL: the first device] */
  uint8_t port;               /* [1] */
  int gid_index;              /* GID table index [-1: chosen automatically] */
  qpc_gid_family gid_family;  /* preferred family when automatic [IPV4] */
  qpc_transport transport;    /* [RC] */
  uint32_t num_qps;           /* [1] */
  uint32_t message_size;      /* bytes per buffer area [4096]; UD: <= the active MTU */
  uint32_t rx_depth;          /* receives posted per QP [8] */
  uint16_t pkey_index;        /* [0] */
  int32_t pkey_value;         /* resolve pkey_index from this P_Key [-1: unset] */
  uint32_t qkey;              /* UD Q_Key [0x11111111] */
  uint8_t sl;                 /* service level [0] */
  int64_t psn;                /* first QP's send PSN, others +1 [-1: random] */
  uint32_t mtu;               /* force the path MTU, bytes (announced and planned) [0: negotiate] */
  uint8_t max_rd_atomic;      /* [1] */
  uint8_t max_dest_rd_atomic; /* [1] */
  const char* host;           /* identity for diagnostics [NULL: gethostname()] */
} qpc_open_options;

void qpc_open_options_init(qpc_open_options* options);

/* Owning mode: opens the device and port, creates the QPs with their CQs and
 * one registered buffer, moves them to INIT and posts rx_depth receives per
 * QP. `options` may be NULL (defaults). On success *out is a connector the
 * caller frees with qpc_connector_free(), which releases every verbs object.
 * QPC_ERR_INVALID_ARGUMENT (options, NULL out), QPC_ERR_NOT_FOUND (device,
 * port, GID, P_Key), QPC_ERR_VERBS, QPC_ERR_IO. */
qpc_status qpc_connector_open(const qpc_open_options* options, qpc_connector** out,
                              qpc_error** error);

/* A memory region the peer may target with RDMA READ/WRITE. */
typedef struct qpc_mr_desc {
  uint64_t addr;
  uint32_t rkey;
  uint64_t length;
} qpc_mr_desc;

/* Adopted mode: one QP the caller created. */
typedef struct qpc_adopted_qp {
  struct ibv_qp* qp;     /* in RESET or INIT; all of one type (RC, UC, UD), one device */
  const qpc_mr_desc* mr; /* published to the peer with this QP (copied); NULL: none */
} qpc_adopted_qp;

typedef struct qpc_adopt_options {
  uint8_t port;               /* [1] */
  int gid_index;              /* [-1: chosen automatically] */
  qpc_gid_family gid_family;  /* [IPV4] */
  uint16_t pkey_index;        /* used when a QP is moved RESET->INIT here [0] */
  int32_t pkey_value;         /* [-1: unset] */
  uint32_t qkey;              /* UD [0x11111111] */
  uint8_t sl;                 /* [0] */
  int64_t psn;                /* [-1: random] */
  uint32_t mtu;               /* force the path MTU, bytes (announced and planned) [0: negotiate] */
  uint8_t max_rd_atomic;      /* [1] */
  uint8_t max_dest_rd_atomic; /* [1] */
  /* Access flags (enum ibv_access_flags) set at RESET->INIT [0: RC local
   * write, remote write and read; UC local and remote write]. */
  unsigned access_flags;
  const char* host; /* [NULL: gethostname()] */
} qpc_adopt_options;

void qpc_adopt_options_init(qpc_adopt_options* options);

/* Adopted mode: describes the `n` QPs in `qps` (copied) on `options->port`
 * and moves those in RESET to INIT; QPs already in INIT are taken as they are.
 * The caller keeps owning the QPs, their PD, CQs and MRs, and must keep them
 * alive until qpc_connector_free(); it may post receives before connecting and
 * must before the barrier. `options` may be NULL (defaults).
 * QPC_ERR_INVALID_ARGUMENT (no QP, a NULL QP, mixed types or devices, a QP
 * past INIT, an unsupported type), QPC_ERR_NOT_FOUND (port, GID, P_Key),
 * QPC_ERR_VERBS. */
qpc_status qpc_connector_adopt(const qpc_adopted_qp* qps, size_t n,
                               const qpc_adopt_options* options, qpc_connector** out,
                               qpc_error** error);

/* Frees the connector. Owning mode: destroys every verbs object it created
 * (QPs, CQs, MR, PD, context, address handles) and the buffer. Adopted mode:
 * destroys only the UD address handles it created; the caller's QPs stay. */
void qpc_connector_free(qpc_connector* connector);

/* The phases of a connect, in order. */
typedef enum qpc_phase {
  QPC_PHASE_OPEN = 0,
  QPC_PHASE_EXCHANGE = 1,
  QPC_PHASE_VALIDATE = 2,
  QPC_PHASE_CONNECT = 3,
  QPC_PHASE_BARRIER = 4
} qpc_phase;

/* "open", "exchange", "validate", "connect", "barrier"; "unknown" otherwise. */
const char* qpc_phase_name(qpc_phase phase);

/* Called as each phase starts and ends with a one-line summary (valid during
 * the call only), on the thread that called qpc_connector_connect(). */
typedef void (*qpc_step_fn)(void* user, qpc_phase phase, const char* what);

typedef struct qpc_connect_options {
  int timeout_ms;            /* deadline of each exchange step [30000] */
  int validate;              /* refuse when the validator finds an error [1] */
  const char* barrier_stage; /* stage both announce after RTS [NULL: "rts"; "": none] */
  /* Largest message this side will send [0: owning mode, the connector's
   * message_size; adopted, 4096]. UD: the validator refuses a size above the
   * path MTU (ud-message-exceeds-mtu), so adopted UD callers set their
   * largest datagram here. */
  uint32_t message_size;
  uint8_t min_rnr_timer; /* RC [12] */
  uint8_t ack_timeout;   /* RC, ibv_qp_attr.timeout [14] */
  uint8_t retry_cnt;     /* RC [7] */
  uint8_t rnr_retry;     /* RC [7] */
  qpc_step_fn on_step;   /* [NULL] */
  void* on_step_user;
} qpc_connect_options;

void qpc_connect_options_init(qpc_connect_options* options);

/* The flow: exchange descriptions over `exchanger`, plan, validate, refuse on
 * an error finding, move every QP INIT->RTR->RTS (UD: create the address
 * handles), then pass the barrier. `options` may be NULL (defaults). On any
 * failure after the exchange began the peer is told (its connect fails at
 * once). The report accessors below tell how far it got, also on failure.
 * QPC_ERR_INVALID_ARGUMENT (NULL argument, called twice),
 * QPC_ERR_INCOMPATIBLE (the validator refused: see the findings; or the QP
 * counts differ), QPC_ERR_VERBS (a transition or address handle was refused),
 * and the exchanger's QPC_ERR_TIMEOUT, QPC_ERR_PROTOCOL, QPC_ERR_AUTH,
 * QPC_ERR_IO. */
qpc_status qpc_connector_connect(qpc_connector* connector, qpc_exchanger* exchanger,
                                 const qpc_connect_options* options, qpc_error** error);

/* ---- the QPs (either mode); 0 / NULL for a NULL connector or index out of range */

qpc_transport qpc_connector_transport(const qpc_connector* connector);
size_t qpc_connector_num_qps(const qpc_connector* connector);
/* Owned by the connector in owning mode, by the caller when adopted. */
struct ibv_qp* qpc_connector_qp(const qpc_connector* connector, size_t i);
/* UD after connecting: what to put in QP i's send WRs (wr.ud.ah,
 * wr.ud.remote_qpn, wr.ud.remote_qkey). NULL / 0 before, or on RC/UC. The
 * address handle is owned by the connector. */
struct ibv_ah* qpc_connector_ah(const qpc_connector* connector, size_t i);
uint32_t qpc_connector_remote_qpn(const qpc_connector* connector, size_t i);
uint32_t qpc_connector_remote_qkey(const qpc_connector* connector);

/* The MR the peer published with its QP i (the target of RDMA READ/WRITE)
 * into *out. QPC_ERR_NOT_FOUND before the exchange, or when the peer
 * published none for that QP; QPC_ERR_INVALID_ARGUMENT (NULL, i out of range). */
qpc_status qpc_connector_remote_mr(const qpc_connector* connector, size_t i, qpc_mr_desc* out,
                                   qpc_error** error);

/* This side's description, and the peer's once exchanged, as indented JSON
 * (docs/wire-format.md), freed with qpc_string_free(). QPC_ERR_NOT_FOUND for
 * the remote one before the exchange. */
qpc_status qpc_connector_local_json(const qpc_connector* connector, char** json, qpc_error** error);
qpc_status qpc_connector_remote_json(const qpc_connector* connector, char** json,
                                     qpc_error** error);

/* ---- the report: filled as far as the connect got (also on failure) */

/* 1 once every QP is at RTS and the barrier passed; 0 otherwise. */
int qpc_connector_connected(const qpc_connector* connector);
/* The last phase entered (QPC_PHASE_OPEN before connecting). */
qpc_phase qpc_connector_reached(const qpc_connector* connector);

/* Wall time of each phase in nanoseconds (0 for a phase not reached). */
typedef struct qpc_timings {
  uint64_t open_ns;     /* create + describe + INIT (+ receives posted) */
  uint64_t exchange_ns; /* both descriptions swapped */
  uint64_t validate_ns; /* plan + validate */
  uint64_t connect_ns;  /* INIT->RTR->RTS of every QP (+ UD address handles) */
  uint64_t barrier_ns;  /* the barrier after RTS */
} qpc_timings;

/* Fills *out; zeroes for a NULL connector. */
void qpc_connector_timings(const qpc_connector* connector, qpc_timings* out);

typedef enum qpc_severity {
  QPC_SEVERITY_INFO = 0,
  QPC_SEVERITY_WARNING = 1,
  QPC_SEVERITY_ERROR = 2
} qpc_severity;

/* "info", "warning", "error"; "unknown" otherwise. */
const char* qpc_severity_name(qpc_severity severity);

/* One validator finding (docs/rules.md). Strings are owned by the connector. */
typedef struct qpc_finding {
  const char* id; /* stable rule id, e.g. "mtu-mismatch" */
  qpc_severity severity;
  const char* attribute;    /* verbs attribute at fault, e.g. "path_mtu"; may be "" */
  const char* direction;    /* "local", "remote" or "both" */
  int64_t qp_index;         /* the QP concerned; -1 for a port, side or the pair */
  const char* local_value;  /* may be "" */
  const char* remote_value; /* may be "" */
  const char* message;      /* what is wrong and what it leads to */
  const char* fix;          /* what to change */
  const char* text;         /* the whole finding on one line */
} qpc_finding;

/* Findings of the validator (0 before the validate phase). */
size_t qpc_connector_finding_count(const qpc_connector* connector);
/* Fills *out with finding i. QPC_ERR_INVALID_ARGUMENT (NULL, i out of range). */
qpc_status qpc_connector_finding(const qpc_connector* connector, size_t i, qpc_finding* out,
                                 qpc_error** error);

/* ---- owning mode: the data path (QPC_ERR_INVALID_ARGUMENT on an adopted
 * connector). Buffer layout per QP: one send area, rx_depth receive slots,
 * the RDMA target and RDMA source areas (the MR published to the peer covers
 * both, target first) and a read-back area, each message_size bytes (UD
 * receive slots: + 40 bytes of GRH first). All in one MR. */

typedef enum qpc_buffer_kind {
  QPC_BUFFER_SEND = 0,        /* what qpc_connector_post_send() sends and RDMA WRITE writes */
  QPC_BUFFER_RECV = 1,        /* receive slot `slot` (0 .. rx_depth-1) */
  QPC_BUFFER_RDMA_TARGET = 2, /* the peer's RDMA WRITE lands here */
  QPC_BUFFER_RDMA_SOURCE = 3, /* the peer's RDMA READ reads here */
  QPC_BUFFER_READ_BACK = 4    /* this side's RDMA READ lands here */
} qpc_buffer_kind;

/* The address and size of one area of QP i's buffer (owned by the connector).
 * `slot` is used for QPC_BUFFER_RECV only. */
qpc_status qpc_connector_buffer(qpc_connector* connector, size_t i, qpc_buffer_kind kind,
                                uint32_t slot, void** addr, size_t* len, qpc_error** error);

/* message_size and rx_depth of the owning connector; 0 when adopted. */
uint32_t qpc_connector_message_size(const qpc_connector* connector);
uint32_t qpc_connector_rx_depth(const qpc_connector* connector);

/* The send and receive CQs shared by all QPs (owned by the connector), for
 * ibv_poll_cq(). Send completions carry wr_id = i; receive completions
 * wr_id = (i << 32) | slot. NULL when adopted. */
struct ibv_cq* qpc_connector_send_cq(const qpc_connector* connector);
struct ibv_cq* qpc_connector_recv_cq(const qpc_connector* connector);

/* Posts a receive into slot `slot` of QP i (repost a slot after its
 * completion was consumed). QPC_ERR_VERBS. */
qpc_status qpc_connector_post_recv(qpc_connector* connector, size_t i, uint32_t slot,
                                   qpc_error** error);
/* Posts a signaled SEND of the first `len` bytes of QP i's send area (UD: to
 * the peer's QP i). REQUIRES: connected. QPC_ERR_VERBS. */
qpc_status qpc_connector_post_send(qpc_connector* connector, size_t i, uint32_t len,
                                   qpc_error** error);

typedef enum qpc_rdma_op { QPC_RDMA_WRITE = 0, QPC_RDMA_READ = 1 } qpc_rdma_op;

/* Posts a signaled RDMA WRITE from QP i's send area, or RDMA READ into its
 * read-back area, of `len` bytes at the peer's `remote_addr` with `rkey` (see
 * qpc_connector_remote_mr()). RC (WRITE, READ) and UC (WRITE) only.
 * QPC_ERR_VERBS. */
qpc_status qpc_connector_post_rdma(qpc_connector* connector, size_t i, qpc_rdma_op op, uint32_t len,
                                   uint64_t remote_addr, uint32_t rkey, qpc_error** error);

/* ---- owning mode: the library's traffic proof */

typedef enum qpc_role { QPC_ROLE_CLIENT = 0, QPC_ROLE_SERVER = 1 } qpc_role;

typedef struct qpc_traffic_options {
  uint32_t iters; /* ping-pong iterations per QP [1000] */
  uint32_t size;  /* bytes per message, <= message_size [0: message_size] */
  int timeout_ms; /* per wait [10000] */
  int rdma;       /* then RDMA WRITE (RC, UC) and READ (RC), checked [1] */
} qpc_traffic_options;

void qpc_traffic_options_init(qpc_traffic_options* options);

typedef struct qpc_traffic_report {
  uint64_t messages;      /* SENDs completed by this side */
  uint64_t bytes;         /* bytes sent + received in the ping-pong */
  double seconds;         /* ping-pong wall time */
  double avg_rtt_us;      /* per round trip */
  double mbit_per_s;      /* (bytes sent + received) / seconds */
  int rdma_write_checked; /* 1 when the RDMA WRITE phase was checked */
  int rdma_read_checked;  /* 1 when the RDMA READ phase was checked */
} qpc_traffic_report;

/* SEND/RECV ping-pong on every QP with the content checked both ways, then
 * (RC, UC) RDMA WRITE and (RC) READ, checked on both sides; the client sends
 * first, one side must be each role. `options` and `report` may be NULL.
 * REQUIRES: owning mode, connected (barrier passed). QPC_ERR_INVALID_ARGUMENT
 * (adopted, not connected, size too large), QPC_ERR_TRAFFIC (a failed
 * completion, wrong length or content: the offset is named), QPC_ERR_TIMEOUT,
 * QPC_ERR_VERBS. After it, pass a barrier (e.g. "done") before freeing, so
 * that neither side tears down while the other still checks. */
qpc_status qpc_run_traffic(qpc_connector* connector, qpc_role role,
                           const qpc_traffic_options* options, qpc_traffic_report* report,
                           qpc_error** error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QPCONNECT_QPCONNECT_H_ */
