// SPDX-License-Identifier: MIT
#include "report.h"

#include <cerrno>
#include <fstream>

#include "qpconnect/oob/codec.h"

namespace qpconnect::tools {

using nlohmann::ordered_json;

ordered_json SideJson(const EndpointInfo& e) {
  ordered_json qps = ordered_json::array();
  for (size_t i = 0; i < e.qps.size() && i < 16; ++i) {
    qps.push_back({{"qpn", e.qps[i].qpn}, {"psn", e.qps[i].psn}});
  }
  ordered_json j = {{"host", e.identity.host}, {"device", e.identity.device},
                    {"port", e.port.port_num}, {"link_layer", LinkLayerName(e.port.link_layer)},
                    {"lid", e.port.lid},       {"path_mtu", MtuBytes(e.path.path_mtu)},
                    {"num_qps", e.qps.size()}, {"qps", qps}};
  if (e.path.sgid) {
    j["gid_index"] = e.path.sgid->index;
    j["gid"] = GidToString(e.path.sgid->gid);
    j["gid_type"] = GidTypeName(e.path.sgid->type);
  }
  return j;
}

Result<void> WriteDump(const std::string& path, const EndpointInfo& local,
                       const ConnectionPlan& plan, const EndpointInfo& remote) {
  oob::Dump d;
  d.local.endpoint = local;
  d.local.plan = plan;
  d.remote = remote;
  std::ofstream f(path, std::ios::trunc);
  f << oob::EncodeDumpJson(d) << "\n";
  f.close();
  if (!f) return ErrnoError(ErrorCode::kIo, errno, "write --dump " + path);
  return Ok();
}

Result<void> CheckWritable(const std::string& path) {
  std::ofstream f(path, std::ios::app);
  if (!f) return ErrnoError(ErrorCode::kIo, errno, "open --dump " + path + " for writing");
  return Ok();
}

ordered_json TimingsJson(const PhaseTimings& t) {
  auto ms = [](std::chrono::nanoseconds d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  return {{"open", ms(t.open)},         {"exchange", ms(t.exchange)},   {"path", ms(t.path)},
          {"validate", ms(t.validate)}, {"connect", ms(t.connect)},     {"barrier", ms(t.barrier)},
          {"setup", ms(t.setup)},       {"create", ms(t.create.total)}, {"init", ms(t.init.total)},
          {"rtr", ms(t.rtr.total)},     {"rts", ms(t.rts.total)}};
}

ordered_json PerQpJson(const PhaseTimings& t) {
  auto us = [](std::chrono::nanoseconds d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  auto step = [&](const verbs::QpStepTimes& s) -> ordered_json {
    return {{"num_qps", s.qps}, {"p50", us(s.p50)}, {"p99", us(s.p99)}};
  };
  return {{"create", step(t.create)},
          {"init", step(t.init)},
          {"rtr", step(t.rtr)},
          {"rts", step(t.rts)}};
}

}  // namespace qpconnect::tools
