// SPDX-License-Identifier: MIT
#include "codec/convert.h"

#include <cstring>
#include <limits>

#include "codec/wire_ranges.h"
#include "qpconnect/oob/codec.h"

namespace qpconnect::oob::internal {
namespace {

// Copies `v` into `*out` if it lies in lo..hi (by default, T's range);
// otherwise an error naming at + name. The path is built only on error: this
// runs once per field per QP.
template <typename T>
Result<void> Narrow(uint32_t v, T* out, const std::string& at, const char* name, uint32_t lo = 0,
                    uint32_t hi = std::numeric_limits<T>::max()) {
  if (v < lo || v > hi) return OutOfRangeError(at + name, v, lo, hi);
  *out = static_cast<T>(v);
  return Ok();
}

// Enum fields: the message holds any int32 (proto3 enums are open); the core
// enum only the values CheckX accepts.
template <typename E, typename P>
Result<void> ToEnum(P v, E* out, Result<void> (*check)(int64_t, const std::string&),
                    const std::string& at, const char* name) {
  const auto raw = static_cast<int64_t>(v);
  QPC_TRY(check(raw, at + name));
  *out = static_cast<E>(raw);
  return Ok();
}

template <typename P, typename E>
P FromEnum(E v) {
  return static_cast<P>(static_cast<int>(v));
}

void GidEntryToProto(const GidEntry& e, Form form, v1::GidEntry* out) {
  out->set_index(e.index);
  if (form == Form::kBinary) {
    out->set_gid(e.gid.data(), e.gid.size());
  } else {
    out->set_gid_text(GidToString(e.gid));
  }
  out->set_type(FromEnum<v1::GidType>(e.type));
  out->set_family(FromEnum<v1::GidFamily>(e.family));
  out->set_netdev(e.netdev);
  out->set_prefix_length(e.prefix_len);
}

// Parses GID text, after holding it to the text rules (length, characters).
Result<Gid> GidFromText(const std::string& text, const std::string& field) {
  QPC_TRY(CheckText(text, kMaxGidTextBytes, field));
  std::optional<Gid> gid = GidFromString(text);
  if (!gid) return FieldError(field, "\"" + text + "\" is not an IPv6 address");
  return *gid;
}

Result<GidEntry> GidEntryFromProto(const v1::GidEntry& m, const std::string& field) {
  GidEntry e;
  QPC_TRY(Narrow(m.index(), &e.index, field, ".index"));
  const bool has_bytes = !m.gid().empty();
  const bool has_text = !m.gid_text().empty();
  if (has_bytes && has_text) return FieldError(field, "has both gid and gid_text");
  if (has_bytes) {
    if (m.gid().size() != e.gid.size()) {
      return FieldError(field + ".gid", "is " + std::to_string(m.gid().size()) +
                                            " bytes long, not " + std::to_string(e.gid.size()));
    }
    std::memcpy(e.gid.data(), m.gid().data(), e.gid.size());
  } else if (has_text) {
    Result<Gid> gid = GidFromText(m.gid_text(), field + ".gid_text");
    if (!gid) return std::move(gid).error();
    e.gid = *gid;
  } else {
    return FieldError(field, "has neither gid (16 bytes) nor gid_text");
  }
  QPC_TRY(ToEnum(m.type(), &e.type, CheckGidType, field, ".type"));
  QPC_TRY(ToEnum(m.family(), &e.family, CheckGidFamily, field, ".family"));
  QPC_TRY(CheckText(m.netdev(), kMaxNetdevBytes, field + ".netdev"));
  e.netdev = m.netdev();
  // Held to 32 (IPv4-mapped) or 128 with the other ranges (wire_ranges.cc).
  QPC_TRY(Narrow(m.prefix_length(), &e.prefix_len, field, ".prefix_length", 0, 128));
  return e;
}

void QpsToProto(const std::vector<QpEntry>& qps, Form form, v1::Endpoint* out) {
  out->set_qp_count(static_cast<uint32_t>(qps.size()));
  if (form == Form::kJson) {
    out->mutable_qps()->Reserve(static_cast<int>(qps.size()));
    for (const QpEntry& qp : qps) {
      v1::Qp* row = out->add_qps();
      row->set_qpn(qp.qpn);
      row->set_psn(qp.psn);
      if (qp.mr) {
        v1::Mr* mr = row->mutable_mr();
        mr->set_addr(qp.mr->addr);
        mr->set_rkey(qp.mr->rkey);
        mr->set_length(qp.mr->length);
      }
    }
    return;
  }
  v1::QpColumns* cols = out->mutable_qp_columns();
  cols->mutable_qpn_delta()->Reserve(static_cast<int>(qps.size()));
  cols->mutable_psn()->Reserve(static_cast<int>(qps.size()));
  int64_t prev = 0;
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpEntry& qp = qps[i];
    cols->add_qpn_delta(static_cast<int64_t>(qp.qpn) - prev);
    prev = qp.qpn;
    cols->add_psn(qp.psn);
    if (qp.mr) {
      v1::QpMr* mr = cols->add_mrs();
      mr->set_qp_index(static_cast<uint32_t>(i));
      mr->set_addr(qp.mr->addr);
      mr->set_rkey(qp.mr->rkey);
      mr->set_length(qp.mr->length);
    }
  }
}

std::string QpField(const std::string& prefix, size_t i, const char* name) {
  return prefix + "qps[" + std::to_string(i) + "]." + name;
}

Result<void> QpsFromColumns(const v1::QpColumns& cols, const std::string& prefix,
                            std::vector<QpEntry>* qps) {
  const std::string at = prefix + "qp_columns.";
  if (static_cast<size_t>(cols.qpn_delta_size()) > kMaxWireQps) {
    return TooManyError(at + "qpn_delta", static_cast<size_t>(cols.qpn_delta_size()), kMaxWireQps);
  }
  if (cols.psn_size() != cols.qpn_delta_size()) {
    return FieldError(prefix + "qp_columns", "has " + std::to_string(cols.qpn_delta_size()) +
                                                 " qpn_delta but " +
                                                 std::to_string(cols.psn_size()) + " psn entries");
  }
  if (cols.mrs_size() > cols.qpn_delta_size()) {
    return FieldError(at + "mrs", "has " + std::to_string(cols.mrs_size()) +
                                      " entries, more than the " +
                                      std::to_string(cols.qpn_delta_size()) + " QPs");
  }
  const auto n = static_cast<size_t>(cols.qpn_delta_size());
  qps->resize(n);
  int64_t qpn = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t delta = cols.qpn_delta(static_cast<int>(i));
    int64_t next = 0;
    if (__builtin_add_overflow(qpn, delta, &next) || next < 0) {
      return FieldError(QpField(prefix, i, "qpn"), "is out of range: qp_columns.qpn_delta[" +
                                                       std::to_string(i) + "] is " +
                                                       std::to_string(delta));
    }
    if (next > static_cast<int64_t>(kQpnMask)) {
      return ExceedsBitsError(QpField(prefix, i, "qpn"), static_cast<uint64_t>(next), 24);
    }
    qpn = next;
    (*qps)[i].qpn = static_cast<uint32_t>(qpn);
    (*qps)[i].psn = cols.psn(static_cast<int>(i));
  }
  int64_t last = -1;
  for (int j = 0; j < cols.mrs_size(); ++j) {
    const v1::QpMr& m = cols.mrs(j);
    const int64_t index = m.qp_index();
    if (index <= last || index >= static_cast<int64_t>(n)) {
      return FieldError(at + "mrs[" + std::to_string(j) + "].qp_index",
                        std::to_string(index) + " is not above the previous (" +
                            std::to_string(last) + ") and below the QP count (" +
                            std::to_string(n) + ")");
    }
    last = index;
    (*qps)[static_cast<size_t>(index)].mr = MrDescriptor{m.addr(), m.rkey(), m.length()};
  }
  return Ok();
}

Result<void> QpsFromProto(const v1::Endpoint& m, const std::string& prefix,
                          std::vector<QpEntry>* qps) {
  const v1::QpColumns& cols = m.qp_columns();
  const bool has_columns = cols.qpn_delta_size() > 0 || cols.psn_size() > 0 || cols.mrs_size() > 0;
  if (m.qps_size() > 0 && has_columns) {
    return FieldError(prefix + "qps", "and qp_columns are both present; a message has one");
  }
  if (has_columns) {
    QPC_TRY(QpsFromColumns(cols, prefix, qps));
  } else {
    const auto n = static_cast<size_t>(m.qps_size());
    if (n > kMaxWireQps) return TooManyError(prefix + "qps", n, kMaxWireQps);
    qps->resize(n);
    for (size_t i = 0; i < n; ++i) {
      const v1::Qp& row = m.qps(static_cast<int>(i));
      (*qps)[i].qpn = row.qpn();
      (*qps)[i].psn = row.psn();
      if (row.has_mr()) {
        (*qps)[i].mr = MrDescriptor{row.mr().addr(), row.mr().rkey(), row.mr().length()};
      }
    }
  }
  if (m.qp_count() != qps->size()) {
    return FieldError(prefix + "qp_count", std::to_string(m.qp_count()) + " does not match the " +
                                               std::to_string(qps->size()) +
                                               " QPs present (truncated or altered message)");
  }
  return Ok();
}

}  // namespace

void EndpointToProto(const EndpointInfo& info, Form form, v1::Endpoint* out) {
  out->set_version(kWireVersion);
  out->set_minor_version(kWireMinorVersion);
  out->set_transport(FromEnum<v1::Transport>(info.transport));

  v1::Identity* id = out->mutable_identity();
  id->set_host(info.identity.host);
  id->set_device(info.identity.device);
  id->set_node_guid(info.identity.node_guid);

  const PortFacts& p = info.port;
  v1::PortFacts* port = out->mutable_port();
  port->set_port_num(p.port_num);
  port->set_link_layer(FromEnum<v1::LinkLayer>(p.link_layer));
  port->set_active(p.active);
  port->set_lid(p.lid);
  port->set_lmc(p.lmc);
  port->set_sm_lid(p.sm_lid);
  port->set_subnet_prefix(p.subnet_prefix);
  port->set_active_mtu(FromEnum<v1::Mtu>(p.active_mtu));
  port->set_max_mtu(FromEnum<v1::Mtu>(p.max_mtu));
  port->set_grh_required(p.grh_required);

  const PathParams& a = info.path;
  v1::PathParams* path = out->mutable_path();
  path->set_path_mtu(FromEnum<v1::Mtu>(a.path_mtu));
  path->set_use_grh(a.use_grh);
  if (a.sgid) GidEntryToProto(*a.sgid, form, path->mutable_sgid());
  path->set_sl(a.sl);
  path->set_traffic_class(a.traffic_class);
  path->set_hop_limit(a.hop_limit);
  path->set_flow_label(a.flow_label);
  path->set_src_path_bits(a.src_path_bits);
  path->set_path_mtu_forced(a.path_mtu_forced);
  path->set_path_from_sa(a.path_from_sa);
  path->set_gid_choice(FromEnum<v1::GidChoice>(a.gid_choice));

  v1::Keys* keys = out->mutable_keys();
  keys->set_pkey(info.keys.pkey);
  keys->set_pkey_index(info.keys.pkey_index);
  keys->set_qkey(info.keys.qkey);
  if (info.keys.remote_qkey) keys->set_remote_qkey(*info.keys.remote_qkey);

  v1::RdAtomic* rd = out->mutable_rd_atomic();
  rd->set_max_rd_atomic(info.rd_atomic.max_rd_atomic);
  rd->set_max_dest_rd_atomic(info.rd_atomic.max_dest_rd_atomic);
  rd->set_device_max_qp_rd_atom(info.rd_atomic.device_max_qp_rd_atom);
  rd->set_device_max_qp_init_rd_atom(info.rd_atomic.device_max_qp_init_rd_atom);

  for (const GidEntry& e : info.gid_table) GidEntryToProto(e, form, out->add_gid_table());
  for (const NetdevInfo& n : info.netdevs) {
    v1::Netdev* nd = out->add_netdevs();
    nd->set_name(n.name);
    nd->set_mac(MacToString(n.mac));
    nd->set_vlan_id(n.vlan_id);
    nd->set_mtu(n.mtu);
  }
  QpsToProto(info.qps, form, out);
}

Result<void> CheckVersion(uint32_t version, const std::string& field) {
  if (version == 0) {
    return FieldError(field, "is missing (0): not a qpconnect endpoint message");
  }
  if (version > kWireVersion) {
    Error e = FieldError(field, std::to_string(version) + " is newer than supported " +
                                    std::to_string(kWireVersion));
    e.code = ErrorCode::kIncompatible;
    return e;
  }
  return Ok();
}

Result<EndpointInfo> EndpointFromProto(const v1::Endpoint& m, const std::string& prefix) {
  QPC_TRY(CheckVersion(m.version(), prefix + "version"));
  EndpointInfo info;
  QPC_TRY(ToEnum(m.transport(), &info.transport, CheckTransport, prefix, "transport"));

  const std::string id_at = prefix + "identity.";
  QPC_TRY(CheckText(m.identity().host(), kMaxHostBytes, id_at + "host"));
  QPC_TRY(CheckText(m.identity().device(), kMaxDeviceBytes, id_at + "device"));
  info.identity.host = m.identity().host();
  info.identity.device = m.identity().device();
  info.identity.node_guid = m.identity().node_guid();

  const std::string port_at = prefix + "port.";
  const v1::PortFacts& p = m.port();
  PortFacts& port = info.port;
  QPC_TRY(Narrow(p.port_num(), &port.port_num, port_at, "port_num", 1));
  QPC_TRY(ToEnum(p.link_layer(), &port.link_layer, CheckLinkLayer, port_at, "link_layer"));
  port.active = p.active();
  QPC_TRY(Narrow(p.lid(), &port.lid, port_at, "lid"));
  QPC_TRY(Narrow(p.lmc(), &port.lmc, port_at, "lmc", 0, kMaxLmc));
  QPC_TRY(Narrow(p.sm_lid(), &port.sm_lid, port_at, "sm_lid"));
  port.subnet_prefix = p.subnet_prefix();
  QPC_TRY(ToEnum(p.active_mtu(), &port.active_mtu, CheckMtu, port_at, "active_mtu"));
  QPC_TRY(ToEnum(p.max_mtu(), &port.max_mtu, CheckMtu, port_at, "max_mtu"));
  port.grh_required = p.grh_required();

  const std::string path_at = prefix + "path.";
  const v1::PathParams& a = m.path();
  PathParams& path = info.path;
  QPC_TRY(ToEnum(a.path_mtu(), &path.path_mtu, CheckMtu, path_at, "path_mtu"));
  path.use_grh = a.use_grh();
  path.path_mtu_forced = a.path_mtu_forced();
  path.path_from_sa = a.path_from_sa();
  QPC_TRY(ToEnum(a.gid_choice(), &path.gid_choice, CheckGidChoice, path_at, "gid_choice"));
  if (a.has_sgid()) {
    Result<GidEntry> sgid = GidEntryFromProto(a.sgid(), path_at + "sgid");
    if (!sgid) return std::move(sgid).error();
    path.sgid = std::move(*sgid);
  }
  QPC_TRY(Narrow(a.sl(), &path.sl, path_at, "sl", 0, kMaxSl));
  QPC_TRY(Narrow(a.traffic_class(), &path.traffic_class, path_at, "traffic_class"));
  QPC_TRY(Narrow(a.hop_limit(), &path.hop_limit, path_at, "hop_limit"));
  path.flow_label = a.flow_label();
  QPC_TRY(
      Narrow(a.src_path_bits(), &path.src_path_bits, path_at, "src_path_bits", 0, kMaxSrcPathBits));

  const std::string keys_at = prefix + "keys.";
  QPC_TRY(Narrow(m.keys().pkey(), &info.keys.pkey, keys_at, "pkey"));
  QPC_TRY(Narrow(m.keys().pkey_index(), &info.keys.pkey_index, keys_at, "pkey_index"));
  info.keys.qkey = m.keys().qkey();
  if (m.keys().has_remote_qkey()) info.keys.remote_qkey = m.keys().remote_qkey();

  const std::string rd_at = prefix + "rd_atomic.";
  const v1::RdAtomic& rd = m.rd_atomic();
  QPC_TRY(Narrow(rd.max_rd_atomic(), &info.rd_atomic.max_rd_atomic, rd_at, "max_rd_atomic"));
  QPC_TRY(Narrow(rd.max_dest_rd_atomic(), &info.rd_atomic.max_dest_rd_atomic, rd_at,
                 "max_dest_rd_atomic"));
  info.rd_atomic.device_max_qp_rd_atom = rd.device_max_qp_rd_atom();
  info.rd_atomic.device_max_qp_init_rd_atom = rd.device_max_qp_init_rd_atom();

  const auto gids = static_cast<size_t>(m.gid_table_size());
  if (gids > kMaxGidTableEntries) {
    return TooManyError(prefix + "gid_table", gids, kMaxGidTableEntries);
  }
  info.gid_table.reserve(gids);
  for (size_t i = 0; i < gids; ++i) {
    Result<GidEntry> e = GidEntryFromProto(m.gid_table(static_cast<int>(i)),
                                           prefix + "gid_table[" + std::to_string(i) + "]");
    if (!e) return std::move(e).error();
    info.gid_table.push_back(std::move(*e));
  }

  const auto netdevs = static_cast<size_t>(m.netdevs_size());
  if (netdevs > kMaxNetdevs) return TooManyError(prefix + "netdevs", netdevs, kMaxNetdevs);
  for (size_t i = 0; i < netdevs; ++i) {
    const v1::Netdev& nd = m.netdevs(static_cast<int>(i));
    const std::string at = prefix + "netdevs[" + std::to_string(i) + "].";
    QPC_TRY(CheckText(nd.mac(), 17, at + "mac"));
    std::optional<MacAddress> mac = MacFromString(nd.mac());
    if (!mac) {
      return FieldError(at + "mac",
                        "'" + nd.mac() + "' is not a MAC address (six two-digit hex groups)");
    }
    NetdevInfo n;
    n.name = nd.name();
    n.mac = *mac;
    QPC_TRY(Narrow(nd.vlan_id(), &n.vlan_id, at, "vlan_id", 0, kMaxVlanId));
    n.mtu = nd.mtu();
    info.netdevs.push_back(std::move(n));
  }

  QPC_TRY(QpsFromProto(m, prefix, &info.qps));
  QPC_TRY(CheckEndpointRanges(info, prefix));
  return info;
}

void PlanToProto(const ConnectionPlan& plan, v1::Plan* out) {
  out->set_transport(FromEnum<v1::Transport>(plan.transport));
  out->set_message_size(plan.message_size);
  out->mutable_qps()->Reserve(static_cast<int>(plan.qps.size()));
  for (const QpAttrs& a : plan.qps) {
    v1::QpAttrs* q = out->add_qps();
    q->set_qp_num(a.qp_num);
    q->set_port_num(a.port_num);
    q->set_pkey_index(a.pkey_index);
    q->set_qkey(a.qkey);
    q->set_path_mtu(FromEnum<v1::Mtu>(a.path_mtu));
    q->set_dest_qp_num(a.dest_qp_num);
    q->set_rq_psn(a.rq_psn);
    q->set_sq_psn(a.sq_psn);
    q->set_max_rd_atomic(a.max_rd_atomic);
    q->set_max_dest_rd_atomic(a.max_dest_rd_atomic);
    q->set_min_rnr_timer(a.min_rnr_timer);
    q->set_timeout(a.timeout);
    q->set_retry_cnt(a.retry_cnt);
    q->set_rnr_retry(a.rnr_retry);
    if (a.remote_qkey) q->set_remote_qkey(*a.remote_qkey);
    v1::AddressVector* ah = q->mutable_ah();
    ah->set_dlid(a.ah.dlid);
    ah->set_sl(a.ah.sl);
    ah->set_src_path_bits(a.ah.src_path_bits);
    ah->set_port_num(a.ah.port_num);
    ah->set_is_global(a.ah.is_global);
    if (!IsZeroGid(a.ah.dgid)) ah->set_dgid(GidToString(a.ah.dgid));
    ah->set_sgid_index(a.ah.sgid_index);
    ah->set_hop_limit(a.ah.hop_limit);
    ah->set_traffic_class(a.ah.traffic_class);
    ah->set_flow_label(a.ah.flow_label);
    ah->set_static_rate(a.ah.static_rate);
  }
}

Result<ConnectionPlan> PlanFromProto(const v1::Plan& m, const std::string& prefix) {
  ConnectionPlan plan;
  QPC_TRY(ToEnum(m.transport(), &plan.transport, CheckTransport, prefix, "transport"));
  plan.message_size = m.message_size();
  const auto n = static_cast<size_t>(m.qps_size());
  if (n > kMaxWireQps) return TooManyError(prefix + "qps", n, kMaxWireQps);
  plan.qps.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const v1::QpAttrs& q = m.qps(static_cast<int>(i));
    QpAttrs& a = plan.qps[i];
    const std::string at = prefix + "qps[" + std::to_string(i) + "].";
    a.qp_num = q.qp_num();
    QPC_TRY(Narrow(q.port_num(), &a.port_num, at, "port_num", 1));
    QPC_TRY(Narrow(q.pkey_index(), &a.pkey_index, at, "pkey_index"));
    a.qkey = q.qkey();
    QPC_TRY(ToEnum(q.path_mtu(), &a.path_mtu, CheckMtu, at, "path_mtu"));
    a.dest_qp_num = q.dest_qp_num();
    a.rq_psn = q.rq_psn();
    a.sq_psn = q.sq_psn();
    QPC_TRY(Narrow(q.max_rd_atomic(), &a.max_rd_atomic, at, "max_rd_atomic"));
    QPC_TRY(Narrow(q.max_dest_rd_atomic(), &a.max_dest_rd_atomic, at, "max_dest_rd_atomic"));
    QPC_TRY(Narrow(q.min_rnr_timer(), &a.min_rnr_timer, at, "min_rnr_timer", 0, kMaxRnrTimer));
    QPC_TRY(Narrow(q.timeout(), &a.timeout, at, "timeout", 0, kMaxTimeout));
    QPC_TRY(Narrow(q.retry_cnt(), &a.retry_cnt, at, "retry_cnt", 0, kMaxRetry));
    QPC_TRY(Narrow(q.rnr_retry(), &a.rnr_retry, at, "rnr_retry", 0, kMaxRetry));
    if (q.has_remote_qkey()) a.remote_qkey = q.remote_qkey();
    const v1::AddressVector& ah = q.ah();
    QPC_TRY(Narrow(ah.dlid(), &a.ah.dlid, at, "ah.dlid"));
    QPC_TRY(Narrow(ah.sl(), &a.ah.sl, at, "ah.sl", 0, kMaxSl));
    QPC_TRY(Narrow(ah.src_path_bits(), &a.ah.src_path_bits, at, "ah.src_path_bits", 0,
                   kMaxSrcPathBits));
    QPC_TRY(Narrow(ah.port_num(), &a.ah.port_num, at, "ah.port_num", 1));
    a.ah.is_global = ah.is_global();
    a.ah.dgid = Gid{};
    if (!ah.dgid().empty()) {
      Result<Gid> dgid = GidFromText(ah.dgid(), at + "ah.dgid");
      if (!dgid) return std::move(dgid).error();
      a.ah.dgid = *dgid;
    }
    QPC_TRY(Narrow(ah.sgid_index(), &a.ah.sgid_index, at, "ah.sgid_index"));
    QPC_TRY(Narrow(ah.hop_limit(), &a.ah.hop_limit, at, "ah.hop_limit"));
    QPC_TRY(Narrow(ah.traffic_class(), &a.ah.traffic_class, at, "ah.traffic_class"));
    a.ah.flow_label = ah.flow_label();
    QPC_TRY(Narrow(ah.static_rate(), &a.ah.static_rate, at, "ah.static_rate"));
  }
  QPC_TRY(CheckPlanRanges(plan, prefix));
  return plan;
}

}  // namespace qpconnect::oob::internal
