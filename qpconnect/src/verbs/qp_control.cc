// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/qp_control.h"

#include <string>

#include "qpconnect/verbs/device_query.h"
#include "qpconnect/verbs/kernel_path.h"
#include "qpconnect/verbs/netdev_addresses.h"
#include "qpconnect/verbs/port_counters.h"
#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {
namespace {

class VerbsQpEnv final : public QpEnv {
 public:
  std::unique_ptr<QpControl> Control(ibv_qp& qp) override {
    return std::make_unique<VerbsQpControl>(qp);
  }
  Result<UniqueAh> CreateAh(ibv_pd& pd, const ibv_ah_attr& attr) override {
    return verbs::CreateAh(pd, attr);
  }
  Result<LocalDescription> Describe(ibv_context& ctx, const DescribeOptions& options) override {
    return DescribeLocal(ctx, options);
  }
  Result<std::vector<GidEntry>> ReadGids(ibv_context& ctx, uint8_t port) override {
    ibv_port_attr pa{};
    if (int rc = ibv_query_port(&ctx, port, &pa); rc != 0) {
      return VerbsError("ibv_query_port " + std::to_string(port), rc);
    }
    return QueryGids(ctx, port, static_cast<uint32_t>(pa.gid_tbl_len));
  }
  Result<std::optional<GidEntry>> ReadGidAt(ibv_context& ctx, uint8_t port,
                                            uint16_t index) override {
    return QueryGidAt(ctx, port, index);
  }
  std::vector<NetdevInfo> ReadNetdevs(const std::vector<std::string>& names) override {
    std::vector<NetdevInfo> out;
    for (const std::string& name : names) {
      if (auto n = ReadNetdev(name)) out.push_back(std::move(*n));
    }
    return out;
  }
  std::vector<AddressPrefix> ReadAddressPrefixes(const std::vector<std::string>& names) override {
    return ReadNetdevAddresses(names);
  }
  std::optional<RocePathFacts> ReadPath(const RocePathQuery& query) override {
    return ReadKernelPath(query);
  }
  PortCounters ReadPortCounters(ibv_context& ctx, uint8_t port) override {
    return ReadSysfsPortCounters(ibv_get_device_name(ctx.device), port);
  }
  Result<RetryBudget> ReadRetryBudget(ibv_qp& qp) override {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (int rc = ibv_query_qp(&qp, &attr, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT, &init); rc != 0) {
      return VerbsError("ibv_query_qp", rc);
    }
    RetryBudget b;
    b.acknowledged = qp.qp_type == IBV_QPT_RC;
    b.timeout = attr.timeout;
    b.retry_cnt = attr.retry_cnt;
    return b;
  }
  void PublishPeers(std::span<const PublishedPeer> peers) override {
    PeerRegistry::Process().Publish(peers);
  }
};

}  // namespace

QpEnv& QpEnv::Default() {
  static VerbsQpEnv env;
  return env;
}

Result<void> VerbsQpControl::Modify(const ibv_qp_attr& attr, int mask) {
  ibv_qp_attr copy = attr;  // ibv_modify_qp takes a non-const pointer
  if (int rc = ibv_modify_qp(qp_, &copy, mask); rc != 0) return VerbsError("ibv_modify_qp", rc);
  return Ok();
}

Result<QpState> VerbsQpControl::State() {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(qp_, &attr, IBV_QP_STATE, &init); rc != 0) {
    return VerbsError("ibv_query_qp", rc);
  }
  return FromIbvState(attr.qp_state);
}

Result<uint8_t> VerbsQpControl::PortNum() {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_PORT, &init); rc != 0) {
    return VerbsError("ibv_query_qp", rc);
  }
  return attr.port_num;
}

}  // namespace qpconnect::verbs
