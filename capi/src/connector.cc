// SPDX-License-Identifier: MIT
// The C API's connector: both modes, the connect flow, the report, and the
// owning mode's data path and traffic proof.
#include <limits>
#include <string>

#include "internal.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/verbs/traffic.h"

namespace qpconnect::capi {
namespace {

// The GID preference of both option structs.
Result<GidPreference> GidFrom(const char* function, int index, qpc_gid_family family) {
  GidPreference g;
  if (index >= 0) {
    if (index > std::numeric_limits<uint16_t>::max()) {
      return Invalid(function, "gid_index", "GID index " + std::to_string(index) + " is too large");
    }
    g.index = static_cast<uint16_t>(index);
  }
  if (family == QPC_GID_IPV6) {
    g.family = GidFamily::kIpv6;
  } else if (family != QPC_GID_IPV4) {
    return Invalid(function, "gid_family", "unknown GID family " + std::to_string(family));
  }
  return g;
}

Result<std::optional<Mtu>> MtuFrom(const char* function, uint32_t bytes) {
  if (bytes == 0) return std::optional<Mtu>();
  const Mtu mtu = bytes > 4096 ? Mtu::kInvalid : MtuFromBytes(static_cast<int>(bytes));
  if (mtu == Mtu::kInvalid) {
    return Invalid(function, "mtu",
                   "MTU " + std::to_string(bytes) + " is not 256, 512, 1024, 2048 or 4096");
  }
  return std::optional<Mtu>(mtu);
}

Result<std::optional<uint32_t>> PsnFrom(const char* function, int64_t psn) {
  if (psn == -1) return std::optional<uint32_t>();
  if (psn < 0 || psn > static_cast<int64_t>(kPsnMask)) {
    return Invalid(function, "psn", "PSN " + std::to_string(psn) + " is not -1 or 24 bits");
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(psn));
}

Result<std::optional<uint16_t>> PkeyFrom(const char* function, int32_t pkey) {
  if (pkey == -1) return std::optional<uint16_t>();
  if (pkey < 0 || pkey > 0xffff) {
    return Invalid(function, "pkey_value",
                   "P_Key " + std::to_string(pkey) + " is not -1 or 16 bits");
  }
  return std::optional<uint16_t>(static_cast<uint16_t>(pkey));
}

Result<Transport> TransportFrom(const char* function, qpc_transport t) {
  switch (t) {
    case QPC_TRANSPORT_RC:
      return Transport::kRc;
    case QPC_TRANSPORT_UC:
      return Transport::kUc;
    case QPC_TRANSPORT_UD:
      return Transport::kUd;
  }
  return Invalid(function, "transport", "unknown transport " + std::to_string(t));
}

// The fields qpc_open_options and qpc_adopt_options share, with the C
// defaults from the C++ defaults `d` (SessionOptions or AdoptOptions).
template <typename COptions, typename CppOptions>
void InitCommon(COptions& o, const CppOptions& d) {
  o = COptions{};
  o.port = d.port;
  o.gid_index = -1;
  o.gid_family = QPC_GID_IPV4;
  o.pkey_index = d.pkey_index;
  o.pkey_value = -1;
  o.qkey = d.qkey;
  o.sl = d.sl;
  o.psn = -1;
  o.mtu = 0;
  o.max_rd_atomic = d.max_rd_atomic;
  o.max_dest_rd_atomic = d.max_dest_rd_atomic;
}

// The shared fields into SessionOptions or AdoptOptions, checked.
template <typename COptions, typename CppOptions>
Result<void> ConvertCommon(const char* function, const COptions& o, CppOptions& out) {
  out.port = o.port;
  auto gid = GidFrom(function, o.gid_index, o.gid_family);
  if (!gid) return std::move(gid).error();
  out.gid = *gid;
  out.pkey_index = o.pkey_index;
  auto pkey = PkeyFrom(function, o.pkey_value);
  if (!pkey) return std::move(pkey).error();
  out.pkey_value = *pkey;
  out.qkey = o.qkey;
  out.sl = o.sl;
  auto psn = PsnFrom(function, o.psn);
  if (!psn) return std::move(psn).error();
  out.psn = *psn;
  // The one MTU knob: described as forced, which the plan follows.
  auto mtu = MtuFrom(function, o.mtu);
  if (!mtu) return std::move(mtu).error();
  out.mtu = *mtu;
  out.max_rd_atomic = o.max_rd_atomic;
  out.max_dest_rd_atomic = o.max_dest_rd_atomic;
  if (o.host != nullptr) out.host = o.host;
  return Ok();
}

Result<void> Wrap(qpc_connector** out, std::unique_ptr<Connector> impl) {
  auto handle = std::make_unique<qpc_connector>();
  handle->impl = std::move(impl);
  *out = handle.release();
  return Ok();
}

// The owning connector's session; kInvalidArgument when adopted or NULL.
Result<verbs::Session*> SessionOf(const char* function, qpc_connector* c) {
  if (c == nullptr) return NullArgument(function, "connector");
  verbs::Session* s = c->impl->session();
  if (s == nullptr) {
    return Invalid(function, "connector",
                   "an adopted connector has no library buffers or CQs (owning mode only)");
  }
  return s;
}

Result<void> CheckQp(const char* function, const qpc_connector* c, size_t i) {
  if (i >= c->impl->num_qps()) {
    return Invalid(function, "i",
                   "QP " + std::to_string(i) + " of " + std::to_string(c->impl->num_qps()));
  }
  return Ok();
}

Result<void> CheckConnected(const char* function, const qpc_connector* c) {
  if (!c->impl->report().connected) {
    return Invalid(function, "connector", "not connected (call qpc_connector_connect first)");
  }
  return Ok();
}

Result<void> CheckLength(const char* function, const verbs::Session& s, uint32_t len) {
  if (len > s.options().message_size) {
    return Invalid(function, "len",
                   std::to_string(len) + " bytes exceed the message size " +
                       std::to_string(s.options().message_size));
  }
  return Ok();
}

}  // namespace

Result<verbs::SessionOptions> SessionOptionsFrom(const char* function,
                                                 const qpc_open_options* options) {
  qpc_open_options o;
  qpc_open_options_init(&o);
  if (options != nullptr) o = *options;
  verbs::SessionOptions s;
  QPC_TRY(ConvertCommon(function, o, s));
  if (o.device != nullptr) s.device = o.device;
  auto transport = TransportFrom(function, o.transport);
  if (!transport) return std::move(transport).error();
  s.transport = *transport;
  s.num_qps = o.num_qps;
  s.message_size = o.message_size;
  s.rx_depth = o.rx_depth;
  return s;
}

Result<AdoptOptions> AdoptOptionsFrom(const char* function, const qpc_adopt_options* options) {
  qpc_adopt_options o;
  qpc_adopt_options_init(&o);
  if (options != nullptr) o = *options;
  AdoptOptions a;
  QPC_TRY(ConvertCommon(function, o, a));
  if (o.access_flags != 0) a.access_flags = o.access_flags;
  return a;
}

}  // namespace qpconnect::capi

using namespace qpconnect;        // NOLINT: the C entry points below
using namespace qpconnect::capi;  // NOLINT

extern "C" {

const char* qpc_transport_name(qpc_transport transport) {
  switch (transport) {
    case QPC_TRANSPORT_RC:
    case QPC_TRANSPORT_UC:
    case QPC_TRANSPORT_UD:
      return TransportName(static_cast<Transport>(transport));
  }
  return "unknown";
}

const char* qpc_phase_name(qpc_phase phase) {
  switch (phase) {
    case QPC_PHASE_OPEN:
    case QPC_PHASE_EXCHANGE:
    case QPC_PHASE_VALIDATE:
    case QPC_PHASE_CONNECT:
    case QPC_PHASE_BARRIER:
      return ConnectPhaseName(static_cast<ConnectPhase>(phase));
  }
  return "unknown";
}

const char* qpc_severity_name(qpc_severity severity) {
  switch (severity) {
    case QPC_SEVERITY_INFO:
    case QPC_SEVERITY_WARNING:
    case QPC_SEVERITY_ERROR:
      return SeverityName(static_cast<Severity>(severity));
  }
  return "unknown";
}

void qpc_open_options_init(qpc_open_options* options) {
  if (options == nullptr) return;
  const verbs::SessionOptions d;
  InitCommon(*options, d);
  options->transport = QPC_TRANSPORT_RC;
  options->num_qps = d.num_qps;
  options->message_size = d.message_size;
  options->rx_depth = d.rx_depth;
}

qpc_status qpc_connector_open(const qpc_open_options* options, qpc_connector** out,
                              qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_open";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (out == nullptr) return NullArgument(kFn, "out");
    auto s = SessionOptionsFrom(kFn, options);
    if (!s) return std::move(s).error();
    auto c = Connector::Open(*s);
    if (!c) return std::move(c).error();
    return Wrap(out, std::move(*c));
  });
}

void qpc_adopt_options_init(qpc_adopt_options* options) {
  if (options == nullptr) return;
  InitCommon(*options, AdoptOptions{});
  options->access_flags = 0;
}

qpc_status qpc_connector_adopt(const qpc_adopted_qp* qps, size_t n,
                               const qpc_adopt_options* options, qpc_connector** out,
                               qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_adopt";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (out == nullptr) return NullArgument(kFn, "out");
    if (qps == nullptr) return NullArgument(kFn, "qps");
    if (n == 0) return Invalid(kFn, "n", "no QP given");
    auto a = AdoptOptionsFrom(kFn, options);
    if (!a) return std::move(a).error();
    std::vector<AdoptedQp> adopted(n);
    for (size_t i = 0; i < n; ++i) {
      adopted[i].qp = qps[i].qp;  // a NULL QP is refused by Adopt, naming its index
      if (qps[i].mr != nullptr) {
        adopted[i].mr = MrDescriptor{qps[i].mr->addr, qps[i].mr->rkey, qps[i].mr->length};
      }
    }
    auto c = Connector::Adopt(std::move(adopted), *a);
    if (!c) return std::move(c).error();
    return Wrap(out, std::move(*c));
  });
}

void qpc_connector_free(qpc_connector* connector) {
  (void)Boundary("qpc_connector_free", nullptr, [&]() -> Result<void> {
    delete connector;  // the deleters log failed destroys; nothing throws
    return Ok();
  });
}

void qpc_connect_options_init(qpc_connect_options* options) {
  if (options == nullptr) return;
  const ConnectorOptions d;
  const PlanOptions p;
  *options = qpc_connect_options{};
  options->timeout_ms = static_cast<int>(d.timeout.count());
  options->validate = d.validate ? 1 : 0;
  options->barrier_stage = nullptr;
  options->message_size = 0;
  options->min_rnr_timer = p.min_rnr_timer;
  options->ack_timeout = p.timeout;
  options->retry_cnt = p.retry_cnt;
  options->rnr_retry = p.rnr_retry;
}

qpc_status qpc_connector_connect(qpc_connector* connector, qpc_exchanger* exchanger,
                                 const qpc_connect_options* options, qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_connect";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (connector == nullptr) return NullArgument(kFn, "connector");
    if (exchanger == nullptr) return NullArgument(kFn, "exchanger");
    qpc_connect_options o;
    qpc_connect_options_init(&o);
    if (options != nullptr) o = *options;
    ConnectorOptions c;
    c.timeout = Millis(o.timeout_ms);
    c.validate = o.validate != 0;
    if (o.barrier_stage != nullptr) c.barrier_stage = o.barrier_stage;
    if (o.message_size != 0) {
      c.plan.message_size = o.message_size;
    } else if (const verbs::Session* s = connector->impl->session()) {
      c.plan.message_size = s->options().message_size;
    }
    c.plan.min_rnr_timer = o.min_rnr_timer;
    c.plan.timeout = o.ack_timeout;
    c.plan.retry_cnt = o.retry_cnt;
    c.plan.rnr_retry = o.rnr_retry;
    if (o.on_step != nullptr) {
      c.on_step = [fn = o.on_step, user = o.on_step_user](ConnectPhase phase,
                                                          std::string_view what) {
        const std::string text(what);
        fn(user, static_cast<qpc_phase>(phase), text.c_str());
      };
    }
    auto r = connector->impl->Connect(*exchanger->impl, c);
    if (!r) return std::move(r).error();
    return Ok();
  });
}

qpc_transport qpc_connector_transport(const qpc_connector* connector) {
  if (connector == nullptr) return static_cast<qpc_transport>(0);
  return static_cast<qpc_transport>(connector->impl->transport());
}

size_t qpc_connector_num_qps(const qpc_connector* connector) {
  return connector == nullptr ? 0 : connector->impl->num_qps();
}

struct ibv_qp* qpc_connector_qp(const qpc_connector* connector, size_t i) {
  if (connector == nullptr || i >= connector->impl->num_qps()) return nullptr;
  return connector->impl->qp(i);
}

struct ibv_ah* qpc_connector_ah(const qpc_connector* connector, size_t i) {
  if (connector == nullptr || i >= connector->impl->num_qps()) return nullptr;
  return connector->impl->ah(i);
}

uint32_t qpc_connector_remote_qpn(const qpc_connector* connector, size_t i) {
  if (connector == nullptr || i >= connector->impl->num_qps()) return 0;
  return connector->impl->remote_qpn(i);
}

uint32_t qpc_connector_remote_qkey(const qpc_connector* connector) {
  return connector == nullptr ? 0 : connector->impl->remote_qkey();
}

qpc_status qpc_connector_remote_mr(const qpc_connector* connector, size_t i, qpc_mr_desc* out,
                                   qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_remote_mr";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (connector == nullptr) return NullArgument(kFn, "connector");
    if (out == nullptr) return NullArgument(kFn, "out");
    QPC_TRY(CheckQp(kFn, connector, i));
    const auto& remote = connector->impl->report().remote;
    if (!remote) return Error{ErrorCode::kNotFound, 0, kFn, "", "no peer description yet"};
    if (i >= remote->qps.size() || !remote->qps[i].mr) {
      return Error{ErrorCode::kNotFound, 0, kFn, "mr",
                   "the peer published no memory region with its QP " + std::to_string(i)};
    }
    const MrDescriptor& mr = *remote->qps[i].mr;
    *out = qpc_mr_desc{mr.addr, mr.rkey, mr.length};
    return Ok();
  });
}

qpc_status qpc_connector_local_json(const qpc_connector* connector, char** json,
                                    qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_local_json";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (connector == nullptr) return NullArgument(kFn, "connector");
    if (json == nullptr) return NullArgument(kFn, "json");
    auto text = DupString(oob::EncodeJson(connector->impl->Local()));
    if (!text) return std::move(text).error();
    *json = *text;
    return Ok();
  });
}

qpc_status qpc_connector_remote_json(const qpc_connector* connector, char** json,
                                     qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_remote_json";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (connector == nullptr) return NullArgument(kFn, "connector");
    if (json == nullptr) return NullArgument(kFn, "json");
    const auto& remote = connector->impl->report().remote;
    if (!remote) return Error{ErrorCode::kNotFound, 0, kFn, "", "no peer description yet"};
    auto text = DupString(oob::EncodeJson(*remote));
    if (!text) return std::move(text).error();
    *json = *text;
    return Ok();
  });
}

int qpc_connector_connected(const qpc_connector* connector) {
  return connector != nullptr && connector->impl->report().connected ? 1 : 0;
}

qpc_phase qpc_connector_reached(const qpc_connector* connector) {
  if (connector == nullptr) return QPC_PHASE_OPEN;
  return static_cast<qpc_phase>(connector->impl->report().reached);
}

void qpc_connector_timings(const qpc_connector* connector, qpc_timings* out) {
  if (out == nullptr) return;
  *out = qpc_timings{};
  if (connector == nullptr) return;
  const PhaseTimings& t = connector->impl->report().timings;
  auto ns = [](std::chrono::nanoseconds d) { return static_cast<uint64_t>(d.count()); };
  *out = qpc_timings{ns(t.open), ns(t.exchange), ns(t.validate), ns(t.connect), ns(t.barrier)};
}

size_t qpc_connector_finding_count(const qpc_connector* connector) {
  return connector == nullptr ? 0 : connector->impl->report().findings.size();
}

qpc_status qpc_connector_finding(const qpc_connector* connector, size_t i, qpc_finding* out,
                                 qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_finding";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (connector == nullptr) return NullArgument(kFn, "connector");
    if (out == nullptr) return NullArgument(kFn, "out");
    const auto& findings = connector->impl->report().findings;
    if (i >= findings.size()) {
      return Invalid(kFn, "i",
                     "finding " + std::to_string(i) + " of " + std::to_string(findings.size()));
    }
    // The texts are a cache of the findings, built on the first call.
    auto& texts = connector->finding_texts;
    if (texts.size() != findings.size()) {
      texts.clear();
      for (const auto& f : findings) texts.push_back(FindingToString(f));
    }
    const Finding& f = findings[i];
    out->id = f.id.c_str();
    out->severity = static_cast<qpc_severity>(f.severity);
    out->attribute = f.attribute.c_str();
    out->direction = DirectionName(f.direction);
    out->qp_index = f.qp_index ? static_cast<int64_t>(*f.qp_index) : -1;
    out->local_value = f.local_value.c_str();
    out->remote_value = f.remote_value.c_str();
    out->message = f.message.c_str();
    out->fix = f.fix.c_str();
    out->text = texts[i].c_str();
    return Ok();
  });
}

qpc_status qpc_connector_buffer(qpc_connector* connector, size_t i, qpc_buffer_kind kind,
                                uint32_t slot, void** addr, size_t* len, qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_buffer";
  return Boundary(kFn, error, [&]() -> Result<void> {
    auto session = SessionOf(kFn, connector);
    if (!session) return std::move(session).error();
    verbs::Session& s = **session;
    if (addr == nullptr) return NullArgument(kFn, "addr");
    QPC_TRY(CheckQp(kFn, connector, i));
    const size_t size = s.options().message_size;
    switch (kind) {
      case QPC_BUFFER_SEND:
        *addr = s.SendArea(i);
        break;
      case QPC_BUFFER_RECV:
        if (slot >= s.options().rx_depth) {
          return Invalid(
              kFn, "slot",
              "slot " + std::to_string(slot) + " of " + std::to_string(s.options().rx_depth));
        }
        *addr = s.RecvSlot(i, slot);
        if (len != nullptr) *len = s.RecvSlotBytes();
        return Ok();
      case QPC_BUFFER_RDMA_TARGET:
        *addr = s.RdmaTarget(i);
        break;
      case QPC_BUFFER_RDMA_SOURCE:
        *addr = s.RdmaSource(i);
        break;
      case QPC_BUFFER_READ_BACK:
        *addr = s.ReadBack(i);
        break;
      default:
        return Invalid(kFn, "kind", "unknown buffer kind " + std::to_string(kind));
    }
    if (len != nullptr) *len = size;
    return Ok();
  });
}

uint32_t qpc_connector_message_size(const qpc_connector* connector) {
  if (connector == nullptr) return 0;
  const verbs::Session* s = connector->impl->session();
  return s == nullptr ? 0 : s->options().message_size;
}

uint32_t qpc_connector_rx_depth(const qpc_connector* connector) {
  if (connector == nullptr) return 0;
  const verbs::Session* s = connector->impl->session();
  return s == nullptr ? 0 : s->options().rx_depth;
}

struct ibv_cq* qpc_connector_send_cq(const qpc_connector* connector) {
  verbs::Session* s = connector == nullptr ? nullptr : connector->impl->session();
  return s == nullptr ? nullptr : &s->SendCq();
}

struct ibv_cq* qpc_connector_recv_cq(const qpc_connector* connector) {
  verbs::Session* s = connector == nullptr ? nullptr : connector->impl->session();
  return s == nullptr ? nullptr : &s->RecvCq();
}

qpc_status qpc_connector_post_recv(qpc_connector* connector, size_t i, uint32_t slot,
                                   qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_post_recv";
  return Boundary(kFn, error, [&]() -> Result<void> {
    auto session = SessionOf(kFn, connector);
    if (!session) return std::move(session).error();
    QPC_TRY(CheckQp(kFn, connector, i));
    if (slot >= (*session)->options().rx_depth) {
      return Invalid(
          kFn, "slot",
          "slot " + std::to_string(slot) + " of " + std::to_string((*session)->options().rx_depth));
    }
    return (*session)->PostRecv(i, slot);
  });
}

qpc_status qpc_connector_post_send(qpc_connector* connector, size_t i, uint32_t len,
                                   qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_post_send";
  return Boundary(kFn, error, [&]() -> Result<void> {
    auto session = SessionOf(kFn, connector);
    if (!session) return std::move(session).error();
    QPC_TRY(CheckQp(kFn, connector, i));
    QPC_TRY(CheckConnected(kFn, connector));
    QPC_TRY(CheckLength(kFn, **session, len));
    return (*session)->PostSend(i, len);
  });
}

qpc_status qpc_connector_post_rdma(qpc_connector* connector, size_t i, qpc_rdma_op op, uint32_t len,
                                   uint64_t remote_addr, uint32_t rkey, qpc_error** error) {
  static constexpr const char* kFn = "qpc_connector_post_rdma";
  return Boundary(kFn, error, [&]() -> Result<void> {
    auto session = SessionOf(kFn, connector);
    if (!session) return std::move(session).error();
    verbs::Session& s = **session;
    QPC_TRY(CheckQp(kFn, connector, i));
    QPC_TRY(CheckConnected(kFn, connector));
    QPC_TRY(CheckLength(kFn, s, len));
    if (op != QPC_RDMA_WRITE && op != QPC_RDMA_READ) {
      return Invalid(kFn, "op", "unknown RDMA operation " + std::to_string(op));
    }
    const Transport t = s.transport();
    if (t == Transport::kUd || (t == Transport::kUc && op == QPC_RDMA_READ)) {
      return Invalid(kFn, "op",
                     std::string(op == QPC_RDMA_READ ? "RDMA READ" : "RDMA WRITE") +
                         " is not supported on " + TransportName(t));
    }
    return s.PostRdma(i, op == QPC_RDMA_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, len,
                      remote_addr, rkey);
  });
}

void qpc_traffic_options_init(qpc_traffic_options* options) {
  if (options == nullptr) return;
  const verbs::TrafficOptions d;
  *options = qpc_traffic_options{};
  options->iters = d.iters;
  options->size = 0;
  options->timeout_ms = static_cast<int>(d.timeout.count());
  options->rdma = d.rdma ? 1 : 0;
}

qpc_status qpc_run_traffic(qpc_connector* connector, qpc_role role,
                           const qpc_traffic_options* options, qpc_traffic_report* report,
                           qpc_error** error) {
  static constexpr const char* kFn = "qpc_run_traffic";
  return Boundary(kFn, error, [&]() -> Result<void> {
    auto session = SessionOf(kFn, connector);
    if (!session) return std::move(session).error();
    verbs::Session& s = **session;
    QPC_TRY(CheckConnected(kFn, connector));
    if (role != QPC_ROLE_CLIENT && role != QPC_ROLE_SERVER) {
      return Invalid(kFn, "role", "unknown role " + std::to_string(role));
    }
    qpc_traffic_options o;
    qpc_traffic_options_init(&o);
    if (options != nullptr) o = *options;
    verbs::TrafficOptions t;
    t.iters = o.iters;
    t.size = o.size == 0 ? s.options().message_size : o.size;
    QPC_TRY(CheckLength(kFn, s, t.size));
    t.timeout = Millis(o.timeout_ms);
    t.rdma = o.rdma != 0;
    auto r =
        verbs::RunTraffic(s, *connector->impl->report().remote,
                          role == QPC_ROLE_CLIENT ? verbs::Role::kClient : verbs::Role::kServer, t);
    if (!r) return std::move(r).error();
    if (report != nullptr) {
      *report = qpc_traffic_report{r->messages,
                                   r->bytes,
                                   r->seconds,
                                   r->avg_rtt_us,
                                   r->mbit_per_s,
                                   r->rdma_write_checked ? 1 : 0,
                                   r->rdma_read_checked ? 1 : 0};
    }
    return Ok();
  });
}

}  // extern "C"
