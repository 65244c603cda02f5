// SPDX-License-Identifier: MIT
// libqptrace.so: the preload library of qp-trace (docs/trace.md).
//
// Loaded with LD_PRELOAD into an unmodified program, it interposes the
// exported libibverbs calls that make and configure queue pairs, forwards
// every call unchanged to the next definition (dlvsym(RTLD_NEXT, name,
// version)), and appends what it saw to a JSON Lines trace file, one per
// process:
//   ibv_create_qp, ibv_modify_qp, ibv_destroy_qp, ibv_create_ah   (IBVERBS_1.1)
//   ibv_query_gid, ibv_query_pkey                                  (IBVERBS_1.1)
//   _ibv_query_gid_ex (behind the inline ibv_query_gid_ex)         (IBVERBS_1.11)
// When a QP is bound to a port (INIT) or given an address vector (RTR), the
// preload queries that port itself, once per process: its attributes, its
// valid GID table, the P_Key at the index used, and the device's limits.
//
// What it cannot see: ibv_query_port (a macro over an inline that calls the
// context's op directly), ibv_create_qp_ex with more than a PD (inline, through
// the context's op: such a QP is first seen at its first ibv_modify_qp), the
// data path (ibv_post_send, ibv_poll_cq: inline, never touched), provider
// direct-verbs calls, static links, and QPs made before the preload.
//
// Rules it keeps, because it runs inside programs that do not expect it:
//   - the program's calls get the same arguments and the same results, and
//     errno as the real call left it;
//   - recording that fails (cannot open or write the file) says so once on
//     stderr and the program goes on untraced;
//   - no C++ exceptions or runtime, no locks held across the program's calls,
//     fork-safe (pthread_atfork), thread-safe (one mutex around recording), and
//     re-entrant (calls made while recording are forwarded, not recorded);
//   - nothing runs on the data path.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "json_line.h"
#include "qpconnect/verbs/qp_attr_table.h"

namespace qpconnect::trace_preload {
namespace {

constexpr int kFormatVersion = 1;
constexpr const char* kDefaultPattern = "qp-trace.%p.json";
// The trace descriptor is moved at or above this number, away from the low
// numbers programs dup2() onto.
constexpr int kHighFd = 200;

// ---- The next definitions of the interposed functions -------------------

template <typename Fn>
Fn Next(std::atomic<void*>& slot, const char* name, const char* version) {
  void* p = slot.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = dlvsym(RTLD_NEXT, name, version);
    if (p == nullptr) p = dlsym(RTLD_NEXT, name);
    slot.store(p, std::memory_order_release);
  }
  Fn fn = nullptr;
  static_assert(sizeof fn == sizeof p);
  std::memcpy(&fn, &p, sizeof p);
  return fn;
}

using CreateQpFn = ibv_qp* (*)(ibv_pd*, ibv_qp_init_attr*);
using ModifyQpFn = int (*)(ibv_qp*, ibv_qp_attr*, int);
using DestroyQpFn = int (*)(ibv_qp*);
using CreateAhFn = ibv_ah* (*)(ibv_pd*, ibv_ah_attr*);
using QueryGidFn = int (*)(ibv_context*, uint8_t, int, ibv_gid*);
using QueryGidExFn = int (*)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t);
using QueryGidTableFn = ssize_t (*)(ibv_context*, ibv_gid_entry*, size_t, uint32_t, size_t);
using QueryPkeyFn = int (*)(ibv_context*, uint8_t, int, __be16*);
using QueryDeviceFn = int (*)(ibv_context*, ibv_device_attr*);

std::atomic<void*> g_create_qp{nullptr};
std::atomic<void*> g_modify_qp{nullptr};
std::atomic<void*> g_destroy_qp{nullptr};
std::atomic<void*> g_create_ah{nullptr};
std::atomic<void*> g_query_gid{nullptr};
std::atomic<void*> g_query_gid_ex{nullptr};
std::atomic<void*> g_query_gid_table{nullptr};
std::atomic<void*> g_query_pkey{nullptr};
std::atomic<void*> g_query_device{nullptr};

CreateQpFn NextCreateQp() { return Next<CreateQpFn>(g_create_qp, "ibv_create_qp", "IBVERBS_1.1"); }
ModifyQpFn NextModifyQp() { return Next<ModifyQpFn>(g_modify_qp, "ibv_modify_qp", "IBVERBS_1.1"); }
DestroyQpFn NextDestroyQp() {
  return Next<DestroyQpFn>(g_destroy_qp, "ibv_destroy_qp", "IBVERBS_1.1");
}
CreateAhFn NextCreateAh() { return Next<CreateAhFn>(g_create_ah, "ibv_create_ah", "IBVERBS_1.1"); }
QueryGidFn NextQueryGid() { return Next<QueryGidFn>(g_query_gid, "ibv_query_gid", "IBVERBS_1.1"); }
QueryGidExFn NextQueryGidEx() {
  return Next<QueryGidExFn>(g_query_gid_ex, "_ibv_query_gid_ex", "IBVERBS_1.11");
}
QueryGidTableFn NextQueryGidTable() {
  return Next<QueryGidTableFn>(g_query_gid_table, "_ibv_query_gid_table", "IBVERBS_1.11");
}
QueryPkeyFn NextQueryPkey() {
  return Next<QueryPkeyFn>(g_query_pkey, "ibv_query_pkey", "IBVERBS_1.1");
}
QueryDeviceFn NextQueryDevice() {
  return Next<QueryDeviceFn>(g_query_device, "ibv_query_device", "IBVERBS_1.1");
}

// ---- Re-entrancy ---------------------------------------------------------

// Depth of recording on this thread: calls made while recording (ours, or
// libibverbs calling its own exported symbols) are forwarded unrecorded.
thread_local int t_depth = 0;

class Busy {
 public:
  Busy() { ++t_depth; }
  ~Busy() { --t_depth; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
  static bool Active() { return t_depth > 0; }
};

// ---- The trace file --------------------------------------------------------

struct DeviceSeen {
  char name[IBV_SYSFS_NAME_MAX];
  uint8_t phys_port_cnt;
};
struct PortSeen {
  char device[IBV_SYSFS_NAME_MAX];
  uint8_t port;
};
struct PkeySeen {
  char device[IBV_SYSFS_NAME_MAX];
  uint8_t port;
  uint16_t index;
};

// Everything below is guarded by g_mu.
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
int g_fd = -1;
dev_t g_fd_dev = 0;
ino_t g_fd_ino = 0;
pid_t g_owner = 0;      // the process g_fd and the caches belong to
bool g_failed = false;  // recording gave up in this process
timespec g_t0{};
char g_path[4096];
DeviceSeen g_devices[16];
size_t g_ndevices = 0;
PortSeen g_ports[64];
size_t g_nports = 0;
PkeySeen g_pkeys[64];
size_t g_npkeys = 0;

void WriteStderr(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = write(STDERR_FILENO, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// Gives up recording in this process, saying why once.
void Fail(const char* what, int err) {
  if (g_failed) return;
  g_failed = true;
  if (g_fd >= 0) close(g_fd);
  g_fd = -1;
  char msg[4500];
  std::snprintf(msg, sizeof msg,
                "qp-trace: %s%s%s: not recording QP transitions in process %d from here on "
                "(the program goes on)\n",
                what, err != 0 ? ": " : "", err != 0 ? std::strerror(err) : "",
                static_cast<int>(getpid()));
  WriteStderr(msg);
}

bool Append(char* out, size_t cap, size_t& len, const char* s) {
  const size_t n = std::strlen(s);
  if (len + n + 1 > cap) return false;
  std::memcpy(out + len, s, n + 1);
  len += n;
  return true;
}

// QP_TRACE_FILE with %p (pid), %h (host name) and %% expanded. Without %p, a
// process other than the one qp-trace started (QP_TRACE_PID) appends ".PID",
// so that forked and exec'd children never share a file.
bool ExpandPath(char* out, size_t cap) {
  const char* pattern = std::getenv("QP_TRACE_FILE");
  if (pattern == nullptr || *pattern == '\0') pattern = kDefaultPattern;
  const pid_t pid = getpid();
  char num[32];
  size_t len = 0;
  out[0] = '\0';
  bool has_pid = false;
  for (const char* p = pattern; *p != '\0'; ++p) {
    char piece[300] = {*p, '\0'};
    if (*p == '%' && p[1] == 'p') {
      std::snprintf(piece, sizeof piece, "%d", static_cast<int>(pid));
      has_pid = true;
      ++p;
    } else if (*p == '%' && p[1] == 'h') {
      if (gethostname(piece, sizeof piece - 1) != 0) std::strcpy(piece, "host");
      piece[sizeof piece - 1] = '\0';
      ++p;
    } else if (*p == '%' && p[1] == '%') {
      ++p;
    }
    if (!Append(out, cap, len, piece)) return false;
  }
  const char* first = std::getenv("QP_TRACE_PID");
  if (!has_pid && first != nullptr && std::atoi(first) != static_cast<int>(pid)) {
    std::snprintf(num, sizeof num, ".%d", static_cast<int>(pid));
    if (!Append(out, cap, len, num)) return false;
  }
  return true;
}

bool WriteAll(const char* data, size_t n) {
  // The program may have closed our descriptor and reused its number.
  struct stat st {};
  if (fstat(g_fd, &st) != 0 || st.st_dev != g_fd_dev || st.st_ino != g_fd_ino) {
    g_fd = -1;
    Fail("the program closed the trace file's descriptor", 0);
    return false;
  }
  while (n > 0) {
    const ssize_t w = write(g_fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      char what[4200];
      std::snprintf(what, sizeof what, "cannot write the trace file %s", g_path);
      Fail(what, errno);
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void Stamp(JsonLine& line, const char* event) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t sec = now.tv_sec - g_t0.tv_sec;
  long nsec = now.tv_nsec - g_t0.tv_nsec;
  if (nsec < 0) {
    --sec;
    nsec += 1000000000L;
  }
  line.Str("event", event);
  line.Seconds("t", sec, nsec);
  line.Int("tid", static_cast<int64_t>(gettid()));
}

void Emit(JsonLine& line) {
  line.Finish();
  if (!line.ok()) {
    Fail("out of memory while recording", ENOMEM);
    return;
  }
  WriteAll(line.data(), line.size());
}

void WriteStart() {
  JsonLine line;
  line.Int("qp_trace", kFormatVersion);
  line.Str("event", "start");
  line.Int("pid", getpid());
  line.Int("ppid", getppid());
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  host[sizeof host - 1] = '\0';
  line.Str("host", host);
  line.Str("comm", program_invocation_short_name);
  line.BeginArray("argv");
  char cmdline[8192];
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = read(fd, cmdline, sizeof cmdline);
    close(fd);
    for (ssize_t i = 0; i < n;) {
      const size_t len = strnlen(cmdline + i, static_cast<size_t>(n - i));
      line.StrN(nullptr, cmdline + i, len);
      i += static_cast<ssize_t>(len) + 1;
    }
  }
  line.EndArray();
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  line.Seconds("time", wall.tv_sec, wall.tv_nsec);
  line.Str("file", g_path);
  Emit(line);
}

void ResetForThisProcess(pid_t pid) {
  if (g_fd >= 0) close(g_fd);  // a forked child's copy of its parent's file
  g_fd = -1;
  g_failed = false;
  g_owner = pid;
  g_ndevices = g_nports = g_npkeys = 0;
}

// Opens this process's trace file on its first event. REQUIRES: g_mu held.
bool EnsureOpen() {
  const pid_t pid = getpid();
  if (g_owner != pid) ResetForThisProcess(pid);
  if (g_failed) return false;
  if (g_fd >= 0) return true;
  if (!ExpandPath(g_path, sizeof g_path)) {
    Fail("the trace file name (QP_TRACE_FILE) is too long", 0);
    return false;
  }
  const int fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    char what[4200];
    std::snprintf(what, sizeof what, "cannot create the trace file %s", g_path);
    Fail(what, errno);
    return false;
  }
  g_fd = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  if (g_fd < 0) {
    g_fd = fd;
  } else {
    close(fd);
  }
  struct stat st {};
  if (fstat(g_fd, &st) != 0) {
    Fail("cannot stat the trace file", errno);
    return false;
  }
  g_fd_dev = st.st_dev;
  g_fd_ino = st.st_ino;
  clock_gettime(CLOCK_MONOTONIC, &g_t0);
  WriteStart();
  return !g_failed;
}

// Holds g_mu and opens the file; ok() false when nothing is to be recorded.
class Recording {
 public:
  Recording() {
    pthread_mutex_lock(&g_mu);
    ok_ = EnsureOpen();
  }
  ~Recording() { pthread_mutex_unlock(&g_mu); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

// ---- Values as text --------------------------------------------------------

// The names the trace format uses for libibverbs' enumerations
// (docs/trace.md). Written out here because this library links nothing of
// qpconnect's (see the file comment); qp-validate reads them back by name.
struct Named {
  int value;
  const char* name;
};

template <size_t N>
const char* NameIn(const Named (&table)[N], int value, const char* unknown) {
  for (const Named& n : table) {
    if (n.value == value) return n.name;
  }
  return unknown;
}

constexpr Named kQpTypes[] = {
    {IBV_QPT_RC, "RC"},
    {IBV_QPT_UC, "UC"},
    {IBV_QPT_UD, "UD"},
    {IBV_QPT_RAW_PACKET, "RAW_PACKET"},
    {IBV_QPT_XRC_SEND, "XRC_SEND"},
    {IBV_QPT_XRC_RECV, "XRC_RECV"},
    {IBV_QPT_DRIVER, "DRIVER"},
};
constexpr Named kQpStates[] = {
    {IBV_QPS_RESET, "RESET"}, {IBV_QPS_INIT, "INIT"}, {IBV_QPS_RTR, "RTR"}, {IBV_QPS_RTS, "RTS"},
    {IBV_QPS_SQD, "SQD"},     {IBV_QPS_SQE, "SQE"},   {IBV_QPS_ERR, "ERR"},
};
constexpr Named kPortStates[] = {
    {IBV_PORT_NOP, "NOP"},     {IBV_PORT_DOWN, "DOWN"},     {IBV_PORT_INIT, "INIT"},
    {IBV_PORT_ARMED, "ARMED"}, {IBV_PORT_ACTIVE, "ACTIVE"}, {IBV_PORT_ACTIVE_DEFER, "ACTIVE_DEFER"},
};
constexpr Named kLinkLayers[] = {
    {IBV_LINK_LAYER_INFINIBAND, "infiniband"},
    {IBV_LINK_LAYER_ETHERNET, "ethernet"},
};
constexpr Named kGidTypes[] = {
    {IBV_GID_TYPE_IB, "ib"},
    {IBV_GID_TYPE_ROCE_V1, "roce-v1"},
    {IBV_GID_TYPE_ROCE_V2, "roce-v2"},
};

const char* QpTypeName(int t) { return NameIn(kQpTypes, t, "UNKNOWN"); }
const char* StateName(int s) { return NameIn(kQpStates, s, "UNKNOWN"); }
const char* PortStateName(int s) { return NameIn(kPortStates, s, "UNKNOWN"); }
const char* LinkLayerName(int l) { return NameIn(kLinkLayers, l, "unspecified"); }
const char* GidTypeName(uint32_t t) {
  return NameIn(kGidTypes, static_cast<int>(t), "unspecified");
}

// path_mtu and active_mtu as bytes; an out-of-range enum goes in KEY_raw.
void Mtu(JsonLine& line, const char* key, int mtu) {
  if (mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096) {
    line.Int(key, 128 << mtu);
    return;
  }
  char raw[64];
  std::snprintf(raw, sizeof raw, "%s_raw", key);
  line.Int(raw, mtu);
}

void GidText(JsonLine& line, const char* key, const uint8_t raw[16]) {
  char text[INET6_ADDRSTRLEN] = "";
  if (inet_ntop(AF_INET6, raw, text, sizeof text) == nullptr) text[0] = '\0';
  line.Str(key, text);
}

// errno meaning of a libibverbs return: creators return NULL and set errno;
// the others return an errno value, or -1 with errno set.
int ErrnoOf(int rc, int err) {
  if (rc > 0) return rc;
  if (rc < 0) return err != 0 ? err : EIO;
  return 0;
}

void Result(JsonLine& line, int rc, int err) {
  line.Int("result", rc);
  line.Int("errno", ErrnoOf(rc, err));
}

const char* DeviceName(ibv_context* ctx) {
  return ctx != nullptr && ctx->device != nullptr ? ctx->device->name : "";
}

void AhAttr(JsonLine& line, const char* key, const ibv_ah_attr& ah) {
  line.BeginObject(key);
  line.Uint("dlid", ah.dlid);
  line.Uint("sl", ah.sl);
  line.Uint("src_path_bits", ah.src_path_bits);
  line.Uint("static_rate", ah.static_rate);
  line.Uint("port_num", ah.port_num);
  line.Bool("is_global", ah.is_global != 0);
  if (ah.is_global != 0) {
    line.BeginObject("grh");
    GidText(line, "dgid", ah.grh.dgid.raw);
    line.Uint("sgid_index", ah.grh.sgid_index);
    line.Uint("hop_limit", ah.grh.hop_limit);
    line.Uint("traffic_class", ah.grh.traffic_class);
    line.Uint("flow_label", ah.grh.flow_label);
    line.EndObject();
  }
  line.EndObject();
}

void Cap(JsonLine& line, const ibv_qp_cap& cap) {
  line.BeginObject("cap");
  line.Uint("max_send_wr", cap.max_send_wr);
  line.Uint("max_recv_wr", cap.max_recv_wr);
  line.Uint("max_send_sge", cap.max_send_sge);
  line.Uint("max_recv_sge", cap.max_recv_sge);
  line.Uint("max_inline_data", cap.max_inline_data);
  line.EndObject();
}

// The attributes `mask` sends, by their ibv_qp_attr names, in bit order: the
// attribute table (qpconnect/verbs/qp_attr_table.h) says which field each
// bit carries and how it is recorded.
void QpAttr(JsonLine& line, const ibv_qp_attr& a, int mask) {
  using qpconnect::verbs::AttrFormat;
  line.BeginObject("attr");
  qpconnect::verbs::ForEachMaskBit(mask, [&](int bit, const qpconnect::verbs::QpAttrInfo* row) {
    if (row == nullptr) return;  // a bit libibverbs does not name: not recorded
    switch (row->format) {
      case AttrFormat::kState:
        line.Str(row->field, StateName(static_cast<int>(row->value(a))));
        break;
      case AttrFormat::kDecimal:
      case AttrFormat::kHex:
        line.Uint(row->field, row->value(a));
        break;
      case AttrFormat::kMtu:
        Mtu(line, row->field, static_cast<int>(row->value(a)));
        break;
      case AttrFormat::kAh:
        AhAttr(line, row->field, a.ah_attr);
        break;
      case AttrFormat::kOther:
        if (bit == IBV_QP_ALT_PATH) {
          AhAttr(line, row->field, a.alt_ah_attr);
          line.Uint("alt_pkey_index", a.alt_pkey_index);
          line.Uint("alt_port_num", a.alt_port_num);
          line.Uint("alt_timeout", a.alt_timeout);
        } else if (bit == IBV_QP_CAP) {
          Cap(line, a.cap);
        }
        break;
    }
  });
  line.EndObject();
}

// ---- The preload's own queries (once per process) -------------------------

void CopyName(char* out, const char* name) {
  const size_t n = strnlen(name, IBV_SYSFS_NAME_MAX - 1);
  std::memcpy(out, name, n);
  out[n] = '\0';
}

// The device's limits and GUID; returns its port count (0 unknown).
uint8_t RecordDevice(ibv_context* ctx) {
  const char* name = DeviceName(ctx);
  for (size_t i = 0; i < g_ndevices; ++i) {
    if (std::strcmp(g_devices[i].name, name) == 0) return g_devices[i].phys_port_cnt;
  }
  ibv_device_attr attr{};
  QueryDeviceFn query = NextQueryDevice();
  errno = 0;
  const int rc = query != nullptr ? query(ctx, &attr) : ENOSYS;
  const int err = errno;
  JsonLine line;
  Stamp(line, "device");
  line.Str("by", "qp-trace");
  line.Str("device", name);
  Result(line, rc, err);
  if (rc == 0) {
    line.Hex("node_guid", be64toh(attr.node_guid));
    line.Str("fw_ver", attr.fw_ver);
    line.Uint("vendor_id", attr.vendor_id);
    line.Uint("vendor_part_id", attr.vendor_part_id);
    line.Int("max_qp_rd_atom", attr.max_qp_rd_atom);
    line.Int("max_qp_init_rd_atom", attr.max_qp_init_rd_atom);
    line.Uint("phys_port_cnt", attr.phys_port_cnt);
  }
  Emit(line);
  if (g_ndevices < sizeof g_devices / sizeof g_devices[0]) {
    CopyName(g_devices[g_ndevices].name, name);
    g_devices[g_ndevices].phys_port_cnt = rc == 0 ? attr.phys_port_cnt : 0;
    ++g_ndevices;
  }
  return rc == 0 ? attr.phys_port_cnt : 0;
}

int QueryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  // What the inline ibv_query_port does, without naming the exported symbol
  // (this library must not need libibverbs to load).
  verbs_context* vctx = verbs_get_ctx(ctx);
  if (vctx == nullptr || vctx->sz < sizeof(*vctx) - offsetof(verbs_context, query_port) ||
      vctx->query_port == nullptr) {
    return EOPNOTSUPP;
  }
  return vctx->query_port(ctx, port, attr, sizeof(*attr));
}

// The valid GID table entries of `port`.
void GidTable(JsonLine& line, ibv_context* ctx, uint8_t port, const ibv_port_attr& pa,
              uint8_t ports) {
  QueryGidTableFn table = NextQueryGidTable();
  const size_t max = static_cast<size_t>(pa.gid_tbl_len) * (ports == 0 ? 1 : ports);
  auto* entries =
      static_cast<ibv_gid_entry*>(std::calloc(max == 0 ? 1 : max, sizeof(ibv_gid_entry)));
  ssize_t n = -1;
  int err = ENOMEM;
  if (entries != nullptr && table != nullptr) {
    errno = 0;
    n = table(ctx, entries, max, 0, sizeof(ibv_gid_entry));
    err = errno;
  } else if (table == nullptr) {
    err = ENOSYS;
  }
  line.Int("gids_result", n < 0 ? -1 : 0);
  line.Int("gids_errno", n < 0 ? (err != 0 ? err : EIO) : 0);
  line.BeginArray("gids");
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = entries[i];
    if (e.port_num != port) continue;
    line.BeginObject(nullptr);
    line.Uint("index", e.gid_index);
    GidText(line, "gid", e.gid.raw);
    line.Str("type", GidTypeName(e.gid_type));
    char ifname[IF_NAMESIZE + 1] = "";
    if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, ifname) == nullptr) ifname[0] = '\0';
    line.Str("netdev", ifname);
    line.EndObject();
  }
  line.EndArray();
  std::free(entries);
}

void RecordPort(ibv_context* ctx, uint8_t port) {
  const char* name = DeviceName(ctx);
  for (size_t i = 0; i < g_nports; ++i) {
    if (g_ports[i].port == port && std::strcmp(g_ports[i].device, name) == 0) return;
  }
  const uint8_t ports = RecordDevice(ctx);
  ibv_port_attr pa{};
  errno = 0;
  const int rc = QueryPort(ctx, port, &pa);
  const int err = errno;
  JsonLine line;
  Stamp(line, "port");
  line.Str("by", "qp-trace");
  line.Str("device", name);
  line.Uint("port", port);
  Result(line, rc, err);
  if (rc == 0) {
    line.Str("state", PortStateName(pa.state));
    line.Str("link_layer", LinkLayerName(pa.link_layer));
    line.Uint("lid", pa.lid);
    line.Uint("lmc", pa.lmc);
    line.Uint("sm_lid", pa.sm_lid);
    Mtu(line, "active_mtu", pa.active_mtu);
    Mtu(line, "max_mtu", pa.max_mtu);
    line.Int("gid_tbl_len", pa.gid_tbl_len);
    line.Uint("pkey_tbl_len", pa.pkey_tbl_len);
    line.Hex("port_cap_flags", pa.port_cap_flags);
    line.Bool("grh_required", (pa.flags & IBV_QPF_GRH_REQUIRED) != 0);
    GidTable(line, ctx, port, pa, ports);
  }
  Emit(line);
  if (g_nports < sizeof g_ports / sizeof g_ports[0]) {
    CopyName(g_ports[g_nports].device, name);
    g_ports[g_nports].port = port;
    ++g_nports;
  }
}

void RecordPkey(ibv_context* ctx, uint8_t port, uint16_t index) {
  const char* name = DeviceName(ctx);
  for (size_t i = 0; i < g_npkeys; ++i) {
    const PkeySeen& k = g_pkeys[i];
    if (k.port == port && k.index == index && std::strcmp(k.device, name) == 0) return;
  }
  QueryPkeyFn query = NextQueryPkey();
  __be16 pkey = 0;
  errno = 0;
  const int rc = query != nullptr ? query(ctx, port, index, &pkey) : ENOSYS;
  const int err = errno;
  JsonLine line;
  Stamp(line, "pkey");
  line.Str("by", "qp-trace");
  line.Str("device", name);
  line.Uint("port", port);
  line.Uint("index", index);
  Result(line, rc, err);
  if (rc == 0) line.Uint("pkey", ntohs(pkey));
  Emit(line);
  if (g_npkeys < sizeof g_pkeys / sizeof g_pkeys[0]) {
    CopyName(g_pkeys[g_npkeys].device, name);
    g_pkeys[g_npkeys].port = port;
    g_pkeys[g_npkeys].index = index;
    ++g_npkeys;
  }
}

// Who a QP is, in every QP event (a QP first seen at a modify is learnt there).
void QpIdentity(JsonLine& line, ibv_qp* qp) {
  line.Hex("qp", reinterpret_cast<uintptr_t>(qp));
  line.Hex("pd", reinterpret_cast<uintptr_t>(qp->pd));
  line.Str("device", DeviceName(qp->context));
  line.Uint("qpn", qp->qp_num);
  line.Str("qp_type", QpTypeName(qp->qp_type));
  line.Bool("srq", qp->srq != nullptr);
}

// The modify_qp record, after the port facts it needs. REQUIRES: g_mu held.
void RecordModify(JsonLine& line, ibv_qp* qp, const ibv_qp_attr& a, int mask, int from, int rc,
                  int err) {
  uint8_t port = 0;
  if (mask & IBV_QP_PORT) {
    port = a.port_num;
  } else if (mask & IBV_QP_AV) {
    port = a.ah_attr.port_num;
  }
  if (port != 0) {
    RecordPort(qp->context, port);
    if (mask & IBV_QP_PKEY_INDEX) RecordPkey(qp->context, port, a.pkey_index);
  }
  QpIdentity(line, qp);
  line.Str("from", StateName(from));
  if (mask & IBV_QP_STATE) {
    line.Str("to", StateName(a.qp_state));
  } else {
    line.Null("to");
  }
  line.Int("mask", mask);
  QpAttr(line, a, mask);
  Result(line, rc, err);
}

// Makes the program's call, then, unless recording is off in this process,
// writes one `event` record filled by record(line, result, errno). Returns
// the call's result with errno as the call left it.
template <typename Call, typename Fill>
auto Traced(const char* event, Call call, Fill record) {
  Busy busy;
  auto result = call();
  const int err = errno;
  {
    Recording rec;
    if (rec.ok()) {
      JsonLine line;
      Stamp(line, event);
      record(line, result, err);
      Emit(line);
    }
  }
  errno = err;
  return result;
}

// The errno meaning of a creator's result: NULL and errno, else 0.
void CreatorResult(JsonLine& line, const void* made, int err) {
  line.Int("result", made != nullptr ? 0 : -1);
  line.Int("errno", made != nullptr ? 0 : (err != 0 ? err : EIO));
}

void AtForkPrepare() { pthread_mutex_lock(&g_mu); }
void AtForkParent() { pthread_mutex_unlock(&g_mu); }
void AtForkChild() { pthread_mutex_unlock(&g_mu); }

__attribute__((constructor)) void Load() {
  pthread_atfork(AtForkPrepare, AtForkParent, AtForkChild);
}

// A normal exit marks the trace complete; a kill or a crash leaves it without
// this record, which the reader reports.
__attribute__((destructor)) void Unload() {
  pthread_mutex_lock(&g_mu);
  if (g_fd >= 0 && g_owner == getpid() && !g_failed) {
    JsonLine line;
    Stamp(line, "end");
    Emit(line);
  }
  pthread_mutex_unlock(&g_mu);
}

}  // namespace
}  // namespace qpconnect::trace_preload

// ---- The interposed functions ------------------------------------------------

using namespace qpconnect::trace_preload;  // NOLINT: the hooks are extern "C"

extern "C" {

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  CreateQpFn next = NextCreateQp();
  if (next == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  if (Busy::Active()) return next(pd, init);
  return Traced(
      "create_qp", [&] { return next(pd, init); },
      [&](JsonLine& line, ibv_qp* qp, int err) {
        line.Str("call", "ibv_create_qp");
        if (qp != nullptr) {
          QpIdentity(line, qp);
        } else {
          line.Hex("pd", reinterpret_cast<uintptr_t>(pd));
          line.Str("device", pd != nullptr ? DeviceName(pd->context) : "");
          if (init != nullptr) line.Str("qp_type", QpTypeName(init->qp_type));
        }
        if (init != nullptr) {
          line.Bool("sq_sig_all", init->sq_sig_all != 0);
          Cap(line, init->cap);
        }
        CreatorResult(line, qp, err);
      });
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  ModifyQpFn next = NextModifyQp();
  if (next == nullptr) return ENOSYS;
  if (Busy::Active() || qp == nullptr || attr == nullptr) return next(qp, attr, attr_mask);
  const ibv_qp_attr sent = *attr;
  const int from = qp->state;  // libibverbs keeps it; the call moves it
  return Traced(
      "modify_qp", [&] { return next(qp, attr, attr_mask); },
      [&](JsonLine& line, int rc, int err) {
        RecordModify(line, qp, sent, attr_mask, from, rc, err);
      });
}

int ibv_destroy_qp(ibv_qp* qp) {
  DestroyQpFn next = NextDestroyQp();
  if (next == nullptr) return ENOSYS;
  if (Busy::Active() || qp == nullptr) return next(qp);
  // The QP is freed by the call: take what identifies it first.
  const uintptr_t handle = reinterpret_cast<uintptr_t>(qp);
  const uint32_t qpn = qp->qp_num;
  const int type = qp->qp_type;
  char device[IBV_SYSFS_NAME_MAX];
  CopyName(device, DeviceName(qp->context));
  return Traced(
      "destroy_qp", [&] { return next(qp); },
      [&](JsonLine& line, int rc, int err) {
        line.Hex("qp", handle);
        line.Str("device", device);
        line.Uint("qpn", qpn);
        line.Str("qp_type", QpTypeName(type));
        Result(line, rc, err);
      });
}

ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  CreateAhFn next = NextCreateAh();
  if (next == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  if (Busy::Active() || pd == nullptr || attr == nullptr) return next(pd, attr);
  const ibv_ah_attr sent = *attr;
  return Traced(
      "create_ah", [&] { return next(pd, attr); },
      [&](JsonLine& line, ibv_ah* ah, int err) {
        if (sent.port_num != 0) RecordPort(pd->context, sent.port_num);
        line.Hex("ah", reinterpret_cast<uintptr_t>(ah));
        line.Hex("pd", reinterpret_cast<uintptr_t>(pd));
        line.Str("device", DeviceName(pd->context));
        AhAttr(line, "ah_attr", sent);
        CreatorResult(line, ah, err);
      });
}

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid) {
  QueryGidFn next = NextQueryGid();
  if (next == nullptr) return -1;
  if (Busy::Active() || context == nullptr || gid == nullptr) {
    return next(context, port_num, index, gid);
  }
  return Traced(
      "gid", [&] { return next(context, port_num, index, gid); },
      [&](JsonLine& line, int rc, int err) {
        line.Str("by", "program");
        line.Str("call", "ibv_query_gid");
        line.Str("device", DeviceName(context));
        line.Uint("port", port_num);
        line.Int("index", index);
        Result(line, rc, err);
        if (rc == 0) GidText(line, "gid", gid->raw);
      });
}

int _ibv_query_gid_ex(ibv_context* context, uint32_t port_num, uint32_t gid_index,
                      ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  QueryGidExFn next = NextQueryGidEx();
  if (next == nullptr) return ENOSYS;
  if (Busy::Active() || context == nullptr || entry == nullptr ||
      entry_size < sizeof(ibv_gid_entry)) {
    return next(context, port_num, gid_index, entry, flags, entry_size);
  }
  return Traced(
      "gid", [&] { return next(context, port_num, gid_index, entry, flags, entry_size); },
      [&](JsonLine& line, int rc, int err) {
        line.Str("by", "program");
        line.Str("call", "ibv_query_gid_ex");
        line.Str("device", DeviceName(context));
        line.Uint("port", port_num);
        line.Uint("index", gid_index);
        Result(line, rc, err);
        if (rc == 0) {
          GidText(line, "gid", entry->gid.raw);
          line.Str("type", GidTypeName(entry->gid_type));
        }
      });
}

int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index, __be16* pkey) {
  QueryPkeyFn next = NextQueryPkey();
  if (next == nullptr) return ENOSYS;
  if (Busy::Active() || context == nullptr || pkey == nullptr) {
    return next(context, port_num, index, pkey);
  }
  return Traced(
      "pkey", [&] { return next(context, port_num, index, pkey); },
      [&](JsonLine& line, int rc, int err) {
        line.Str("by", "program");
        line.Str("device", DeviceName(context));
        line.Uint("port", port_num);
        line.Int("index", index);
        Result(line, rc, err);
        if (rc == 0) line.Uint("pkey", ntohs(*pkey));
      });
}

}  // extern "C"
