// SPDX-License-Identifier: MIT
// FakeEnv: the hardware seam of verbs/qp_control.h (QpEnv) over FakeQp, so
// that a Connector adopting fake ibv_qp structs runs its whole flow without a
// device: each ibv_qp the test registers gets its FakeQp as control, the
// description comes from an rxe-like RoCE device's facts (DescribeFromDevice),
// and UD address handles are null. Every modify is logged in order, as
// "<qpn> <state>", so tests can assert the transition order across QPs.
#pragma once

#include <infiniband/verbs.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fakes/fake_qp.h"
#include "fakes/roce_device.h"
#include "qpconnect/verbs/qp_control.h"

namespace qpconnect::testing {

class FakeEnv : public verbs::QpEnv {
 public:
  // `last_octet` makes this side's RoCE GID ::ffff:10.99.0.<last_octet>.
  FakeEnv(std::string host, int last_octet) : host_(std::move(host)), octet_(last_octet) {}

  // Makes a fake ibv_qp of `type` numbered `qpn` on this env's context and
  // PD, backed by a FakeQp in RESET. Both live as long as the env.
  ibv_qp* AddQp(ibv_qp_type type, uint32_t qpn) {
    auto qp = std::make_unique<ibv_qp>();
    qp->qp_type = type;
    qp->qp_num = qpn;
    qp->context = &context_;
    qp->pd = &pd_;
    fakes_[qp.get()] = std::make_unique<FakeQp>(type, qpn);
    ibv_qp* raw = qp.get();
    qps_.push_back(std::move(qp));
    return raw;
  }
  FakeQp& fake(ibv_qp* qp) { return *fakes_.at(qp); }

  std::unique_ptr<verbs::QpControl> Control(ibv_qp& qp) override {
    return std::make_unique<Logged>(*fakes_.at(&qp), log_);
  }
  Result<verbs::UniqueAh> CreateAh(ibv_pd& pd, const ibv_ah_attr& attr) override {
    (void)pd;
    ah_attrs_.push_back(attr);
    return verbs::UniqueAh();
  }
  Result<verbs::LocalDescription> Describe(ibv_context& ctx,
                                           const verbs::DescribeOptions& options) override {
    (void)ctx;
    verbs::DescribeOptions o = options;
    o.host = host_;
    return verbs::DescribeFromDevice(Device(), o);
  }
  Result<std::vector<GidEntry>> ReadGids(ibv_context& ctx, uint8_t port) override {
    (void)ctx;
    for (const auto& p : Device().ports) {
      if (p.facts.port_num == port) return gids_now_ ? *gids_now_ : p.gids;
    }
    return std::vector<GidEntry>{};
  }
  // What ReadGids() returns from now on (a GID table changed under a run).
  void SetGidsNow(std::vector<GidEntry> gids) { gids_now_ = std::move(gids); }

  // ReadPath() returns `facts` with the query it was asked; without this
  // call it reads none (nullopt), as QpEnv's default.
  std::optional<RocePathFacts> ReadPath(const RocePathQuery& query) override {
    if (!path_) return std::nullopt;
    RocePathFacts f = *path_;
    f.query = query;
    return f;
  }
  void SetPath(RocePathFacts facts) { path_ = std::move(facts); }

  // ReadPortCounters() returns the readings queued with AddCounters() in
  // order (the last one again once they run out); none queued: the
  // default's (no counters).
  PortCounters ReadPortCounters(ibv_context& ctx, uint8_t port) override {
    if (counters_.empty()) return QpEnv::ReadPortCounters(ctx, port);
    PortCounters c = counters_.front();
    if (counters_.size() > 1) counters_.erase(counters_.begin());
    return c;
  }
  void AddCounters(PortCounters c) { counters_.push_back(std::move(c)); }
  // ReadRetryBudget() returns `budget` (default: the QpEnv default's).
  Result<RetryBudget> ReadRetryBudget(ibv_qp& qp) override {
    (void)qp;
    return budget_;
  }
  void SetRetryBudget(RetryBudget budget) { budget_ = budget; }
  // PublishPeers() keeps what it is given (published()), and hands it to
  // `registry` when set (a real writer in a test's directory).
  void PublishPeers(std::span<const PublishedPeer> peers) override {
    published_.insert(published_.end(), peers.begin(), peers.end());
    if (registry_ != nullptr) registry_->Publish(peers);
  }
  const std::vector<PublishedPeer>& published() const { return published_; }
  void SetRegistry(PeerRegistry* registry) { registry_ = registry; }

  // "<qpn hex> <target state>" per modify call that reached a fake, in order.
  const std::vector<std::string>& log() const { return log_; }
  const std::vector<ibv_ah_attr>& ah_attrs() const { return ah_attrs_; }

 private:
  // Forwards to the test's FakeQp and logs the call.
  class Logged : public verbs::QpControl {
   public:
    Logged(FakeQp& qp, std::vector<std::string>& log) : qp_(qp), log_(log) {}
    uint32_t QpNum() const override { return qp_.QpNum(); }
    Result<void> Modify(const ibv_qp_attr& attr, int mask) override {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%x %s", qp_.QpNum(),
                    verbs::QpStateName(verbs::FromIbvState(attr.qp_state)));
      log_.push_back(buf);
      return qp_.Modify(attr, mask);
    }
    Result<verbs::QpState> State() override { return qp_.State(); }
    Result<uint8_t> PortNum() override { return qp_.PortNum(); }

   private:
    FakeQp& qp_;
    std::vector<std::string>& log_;
  };

  DeviceInfo Device() const {
    const std::string gid = "::ffff:10.99.0." + std::to_string(octet_);
    return fakes::RxeDevice("rxe0", uint64_t{0x1122334455667700} + static_cast<uint64_t>(octet_),
                            {fakes::RoceV2Gid(1, gid.c_str())}, {{0, 0xffff}});
  }

  std::string host_;
  int octet_;
  ibv_context context_{};
  ibv_pd pd_{};
  std::vector<std::unique_ptr<ibv_qp>> qps_;
  std::map<ibv_qp*, std::unique_ptr<FakeQp>> fakes_;
  std::vector<std::string> log_;
  std::vector<ibv_ah_attr> ah_attrs_;
  std::optional<std::vector<GidEntry>> gids_now_;
  std::optional<RocePathFacts> path_;   // SetPath()
  std::vector<PortCounters> counters_;  // AddCounters()
  RetryBudget budget_;                  // SetRetryBudget()
  std::vector<PublishedPeer> published_;
  PeerRegistry* registry_ = nullptr;
};

}  // namespace qpconnect::testing
