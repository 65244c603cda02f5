// SPDX-License-Identifier: MIT
// The hardware seam for QP state changes: every path that moves a QP (the
// owning Session, the adopting Connector, recycling, and the mesh through
// them) drives a QpControl, which is a real ibv_qp in production and a fake
// modelling ibv_modify_qp(3)'s state table in unit tests
// (tests/fakes/fake_qp.h).
//
// The controls are injected the way leveldb's Env is: code that holds an
// ibv_qp* asks a QpEnv for its QpControl (and, for the little else it does
// to a device while connecting, the address handle and the description).
// Production passes QpEnv::Default(); a unit test passes an env that hands
// out fakes, so the connector's whole flow runs without a device.
//
// Thread-safety: one thread at a time per QP. QpEnv::Default() is stateless
// and may be shared by any number of threads.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "qpconnect/address_prefix.h"
#include "qpconnect/peer_registry.h"
#include "qpconnect/proof_failure.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/resources.h"

namespace qpconnect::verbs {

class QpControl {
 public:
  virtual ~QpControl() = default;
  virtual uint32_t QpNum() const = 0;
  // ibv_modify_qp. On failure: kVerbs with the errno it returned.
  virtual Result<void> Modify(const ibv_qp_attr& attr, int mask) = 0;
  // ibv_query_qp's current state.
  virtual Result<QpState> State() = 0;
  // ibv_query_qp's port_num (meaningful from INIT on); 0 when the provider
  // does not say. The default knows nothing: 0.
  virtual Result<uint8_t> PortNum() { return uint8_t{0}; }
};

// QpControl over a real QP. Does not own `qp`.
class VerbsQpControl final : public QpControl {
 public:
  explicit VerbsQpControl(ibv_qp& qp) : qp_(&qp) {}
  uint32_t QpNum() const override { return qp_->qp_num; }
  Result<void> Modify(const ibv_qp_attr& attr, int mask) override;
  Result<QpState> State() override;
  Result<uint8_t> PortNum() override;

 private:
  ibv_qp* qp_;
};

// What connecting a QP needs from the device, behind one injected seam.
class QpEnv {
 public:
  virtual ~QpEnv() = default;

  // The control of `qp`. Never null; `qp` must outlive it.
  virtual std::unique_ptr<QpControl> Control(ibv_qp& qp) = 0;

  // A UD peer's address handle in `pd` (ibv_create_ah). kVerbs. A fake may
  // return a null handle: nothing is sent through it in a unit test.
  virtual Result<UniqueAh> CreateAh(ibv_pd& pd, const ibv_ah_attr& attr) = 0;

  // DescribeLocal(ctx, options) (verbs/describe.h): the same errors.
  virtual Result<LocalDescription> Describe(ibv_context& ctx, const DescribeOptions& options) = 0;

  // The valid entries of `port`'s GID table as they are now (the connector
  // reads them again right before RTR). kVerbs naming the failed query.
  virtual Result<std::vector<GidEntry>> ReadGids(ibv_context& ctx, uint8_t port) = 0;

  // Entry `index` of `port`'s GID table as it is now; nullopt when empty
  // (the re-check before RTR reads one entry, not the table). The default
  // finds it in ReadGids(); production reads that entry alone.
  virtual Result<std::optional<GidEntry>> ReadGidAt(ibv_context& ctx, uint8_t port,
                                                    uint16_t index) {
    auto all = ReadGids(ctx, port);
    if (!all) return std::move(all).error();
    for (GidEntry& g : *all) {
      if (g.index == index) return std::optional<GidEntry>(std::move(g));
    }
    return std::optional<GidEntry>();
  }

  // RoCE: the netdevs `names` as the kernel has them now (MAC, VLAN, MTU),
  // published to the peer before the exchange; a netdev that cannot be read
  // is left out. The default reads none (the peer then notes it).
  virtual std::vector<NetdevInfo> ReadNetdevs(const std::vector<std::string>& names) {
    (void)names;
    return {};
  }

  // RoCE: the addresses of the netdevs `names` with their prefix lengths,
  // published with the GID table (address_prefix.h) so that the joint GID
  // choice knows which pairs share a subnet. The default reads none (every
  // prefix unknown).
  virtual std::vector<AddressPrefix> ReadAddressPrefixes(const std::vector<std::string>& names) {
    (void)names;
    return {};
  }

  // RoCE: the kernel's facts on the path of `query` (route, neighbour,
  // netdev; roce_path.h), read right before the validation gate. nullopt:
  // this env reads none (the default), and the path rules stay silent.
  virtual std::optional<RocePathFacts> ReadPath(const RocePathQuery& query) {
    (void)query;
    return std::nullopt;
  }

  // `port`'s counters now (proof_failure.h; read before and after a traffic
  // proof, so that a failed one names where the packets stop). Never fails:
  // counters that cannot be read leave PortCounters::unknown saying why. The
  // default reads none.
  virtual PortCounters ReadPortCounters(ibv_context& ctx, uint8_t port) {
    (void)ctx;
    PortCounters c;
    c.port = port;
    c.unknown = "this environment reads no port counters";
    return c;
  }

  // The retry budget of `qp` from its attributes now (ibv_query_qp: type,
  // timeout, retry_cnt). kVerbs when the query fails. The default knows
  // none: an unacknowledged budget (no stall beyond the grace).
  virtual Result<RetryBudget> ReadRetryBudget(ibv_qp& qp) {
    (void)qp;
    return RetryBudget{};
  }

  // The QPs just connected (Composer::Apply) and their peers, published
  // for qp-inspect (peer_registry.h). Never fails the connection. The
  // default publishes nothing (fakes); production appends them to the
  // process's PeerRegistry.
  virtual void PublishPeers(std::span<const PublishedPeer> peers) { (void)peers; }

  // The production env: VerbsQpControl, ibv_create_ah, DescribeLocal,
  // QueryGids, rtnetlink for the netdevs and paths (kernel_path.h), sysfs
  // for the port counters (port_counters.h), ibv_query_qp for the budget.
  static QpEnv& Default();
};

}  // namespace qpconnect::verbs
