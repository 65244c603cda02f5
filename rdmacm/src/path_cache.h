// SPDX-License-Identifier: MIT
// The hardware seam libqpcm's composer runs over (qpconnect/composer.h):
// the verbs layer's own (QpEnv::Default()), except that the kernel's RoCE
// path facts for one GID pair are read once a second, not once per
// connection. Each reading costs three rtnetlink round trips on sockets of
// their own (verbs/kernel_path.h); cmtime's thousand connections over one
// GID pair would pay them a thousand times on each side. A fact that
// changes (a neighbour entry replaced, an address removed) is seen by the
// connections made from a second after it on; the GID read again before RTR
// is never cached.
//
// Thread-safety: REQUIRES library_mutex held (the composer runs under it).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lock.h"
#include "qpconnect/verbs/qp_control.h"

namespace qpconnect::rdmacm {

inline constexpr std::chrono::milliseconds kPathFactsTtl{1000};

class LibraryQpEnv final : public verbs::QpEnv {
 public:
  using Clock = std::chrono::steady_clock;

  std::unique_ptr<verbs::QpControl> Control(ibv_qp& qp) override { return base().Control(qp); }
  Result<verbs::UniqueAh> CreateAh(ibv_pd& pd, const ibv_ah_attr& attr) override {
    return base().CreateAh(pd, attr);
  }
  Result<verbs::LocalDescription> Describe(ibv_context& ctx,
                                           const verbs::DescribeOptions& options) override {
    return base().Describe(ctx, options);
  }
  Result<std::vector<GidEntry>> ReadGids(ibv_context& ctx, uint8_t port) override {
    return base().ReadGids(ctx, port);
  }
  Result<std::optional<GidEntry>> ReadGidAt(ibv_context& ctx, uint8_t port,
                                            uint16_t index) override {
    return base().ReadGidAt(ctx, port, index);
  }
  std::vector<NetdevInfo> ReadNetdevs(const std::vector<std::string>& names) override {
    return base().ReadNetdevs(names);
  }
  std::vector<AddressPrefix> ReadAddressPrefixes(const std::vector<std::string>& names) override {
    return base().ReadAddressPrefixes(names);
  }
  void PublishPeers(std::span<const PublishedPeer> peers) override { base().PublishPeers(peers); }
  // The facts for `query`, read again when the last reading is older than
  // kPathFactsTtl.
  std::optional<RocePathFacts> ReadPath(const RocePathQuery& query) override
      QPCM_REQUIRES(library_mutex);

  // `below`: the seam it forwards to (null: QpEnv::Default()); `now`: the
  // clock (null: the steady clock). Tests give their own.
  explicit LibraryQpEnv(verbs::QpEnv* below = nullptr, Clock::time_point (*now)() = nullptr)
      : below_(below), now_(now != nullptr ? now : &Clock::now) {}

 private:
  verbs::QpEnv& base() { return below_ != nullptr ? *below_ : verbs::QpEnv::Default(); }
  using Key = std::tuple<uint16_t, Gid, std::string, Gid>;
  struct Reading {
    Clock::time_point at;
    std::optional<RocePathFacts> facts;
  };
  verbs::QpEnv* below_;
  Clock::time_point (*now_)();
  std::map<Key, Reading> readings_ QPCM_GUARDED_BY(library_mutex);
};

}  // namespace qpconnect::rdmacm
