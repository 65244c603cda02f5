// SPDX-License-Identifier: MIT
// One violating fixture per catalogue rule: a pair, built for a given
// transport, that breaks exactly that rule (plus any rule listed as an
// unavoidable companion). catalogue_test.cc walks the catalogue through it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "fixtures.h"

namespace qpconnect::test {

struct Violation {
  std::function<Pair(Transport)> make;
  // Other ids the same fixture necessarily raises (e.g. a path MTU above one
  // port's active MTU is above it for both sides' plans).
  std::set<std::string> companions = {};
};

// The SA's PathRecord that agrees with an IbPair's plan (rules_sa.cc raise
// nothing on it): the same SL, the local P_Key, MTU 4096, no routers.
inline PathRecord AgreeingSaPath(const Pair& p) {
  PathRecord r;
  r.slid = p.local.port.lid;
  r.dlid = p.remote.port.lid;
  r.sl = 0;
  r.pkey = p.local.keys.pkey;
  r.mtu = Mtu::k4096;
  r.mtu_selector = 2;
  r.reversible = true;
  return r;
}

inline Transport OtherTransport(Transport t) {
  return t == Transport::kRc ? Transport::kUc : Transport::kRc;
}

// Fixtures keyed by rule id.
inline const std::map<std::string, Violation>& Violations() {
  static const auto* table = new std::map<std::string, Violation>{
      // rules_local.cc
      {"transport-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.remote.transport = OtherTransport(t);
         return p;
       }}},
      {"link-layer-mismatch",
       {[](Transport t) { return Pair{IbEndpoint(t, 0), RoceEndpoint(t, 1), {}, {}, {}, {}}; }}},
      {"port-not-active", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.port.active = false;
         return p;
       }}},
      {"lid-zero", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.port.lid = 0;
         return p;
       }}},
      {"plan-endpoint-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].qp_num = 0x999;
         return p;
       }}},
      {"retry-cnt-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].retry_cnt = 8;
         return p;
       }}},
      {"rnr-retry-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].rnr_retry = 8;
         return p;
       }}},
      {"timeout-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].timeout = 32;
         return p;
       }}},
      {"min-rnr-timer-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].min_rnr_timer = 32;
         return p;
       }}},
      {"rnr-retry-zero", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].rnr_retry = 0;
         return p;
       }}},
      {"timeout-infinite", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].timeout = 0;
         return p;
       }}},
      {"min-rnr-timer-zero", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].min_rnr_timer = 0;
         return p;
       }}},
      // rules_pkey.cc
      {"pkey-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.keys.pkey = 0x8001;
         return p;
       }}},
      {"pkey-no-full-member", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.keys.pkey = 0x7fff;
         p.remote.keys.pkey = 0x7fff;
         return p;
       }}},
      {"pkey-index-not-published", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].pkey_index = 1;  // published: index 0
         return p;
       }}},
      // rules_psn_qpn.cc
      {"qp-list-empty", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.qps.clear();
         return p;
       }}},
      {"qp-count-mismatch", {[](Transport t) {
         return Pair{IbEndpoint(t, 0, 2), IbEndpoint(t, 1, 1), {}, {}, {}, {}};
       }}},
      {"qpn-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.qps[0].qpn = 0x1000100;
         return p;
       }}},
      {"qpn-reserved", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.qps[0].qpn = 1;
         return p;
       }}},
      {"qpn-duplicate", {[](Transport t) {
         Pair p = IbPair(t, 2);
         p.local.qps[1].qpn = p.local.qps[0].qpn;
         return p;
       }}},
      {"psn-out-of-range", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.qps[0].psn = 0x1000000;
         return p;
       }}},
      {"qpn-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].dest_qp_num = 0x777;
         return p;
       }}},
      {"psn-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].rq_psn = 0x123;
         return p;
       }}},
      // rules_mtu.cc
      {"mtu-invalid", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].path_mtu = Mtu::kInvalid;
         return p;
       }}},
      {"mtu-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].path_mtu = Mtu::k1024;
         return p;
       }}},
      {"mtu-above-active",
       {[](Transport t) {
          Pair p = IbPair(t);
          p.WithPlans();
          p.local.port.active_mtu = Mtu::k2048;
          return p;
        },
        {"mtu-above-peer-active"}}},
      {"mtu-above-peer-active",
       {[](Transport t) {
          Pair p = IbPair(t);
          p.WithPlans();
          p.remote.port.active_mtu = Mtu::k2048;
          return p;
        },
        {"mtu-above-active"}}},
      {"ud-message-exceeds-mtu", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->message_size = 8192;
         return p;
       }}},
      // rules_rd_atomic.cc
      // The planner negotiates rd_atomic depths (plan.h), so these fixtures
      // apply values as a program that does not negotiate would (a trace).
      {"rd-atomic-exceeds-peer", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].max_rd_atomic = 4;
         return p;
       }}},
      {"rd-atomic-exceeds-device", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.rd_atomic.device_max_qp_init_rd_atom = 1;
         p.remote.rd_atomic.max_dest_rd_atomic = 2;
         p.WithPlans().local_plan->qps[0].max_rd_atomic = 2;
         p.remote_plan->qps[0].max_dest_rd_atomic = 2;
         return p;
       }}},
      {"dest-rd-atomic-exceeds-device", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].max_dest_rd_atomic = 32;
         return p;
       }}},
      // rules_address.cc
      {"ah-port-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].ah.port_num = 2;
         return p;
       }}},
      {"dlid-not-peer-lid", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].ah.dlid = 7;
         return p;
       }}},
      {"slid-not-peer-dlid", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.port.lid = 4;
         p.local.port.lmc = 2;                                   // LIDs 4..7
         p.WithPlans().local_plan->qps[0].ah.src_path_bits = 1;  // sends from 5; peer targets 4
         return p;
       }}},
      {"src-path-bits-above-lmc", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.path.src_path_bits = 1;  // LMC 0: no path bits
         return p;
       }}},
      {"ud-multicast-destination", {[](Transport t) {
         Pair p = IbPair(t);
         p.WithPlans().local_plan->qps[0].ah.dlid = 0xc001;
         return p;
       }}},
      {"sgid-index-not-in-table", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.sgid_index = 9;
         return p;
       }}},
      {"sgid-index-too-large", {[](Transport t) {
         Pair p = RocePair(t);
         // Index 257 truncates to 1, a valid GID: the planner must not hide it.
         p.local.gid_table.push_back(Entry(257, "::ffff:10.0.0.1", GidType::kRoceV2));
         p.local.path.sgid = p.local.gid_table.back();
         p.WithPlans().local_plan->qps[0].ah.sgid_index = 257;
         return p;
       }}},
      {"sgid-zero", {[](Transport t) {
         Pair p = RocePair(t);
         p.local.gid_table.push_back(Entry(5, "::", GidType::kRoceV2));
         p.WithPlans().local_plan->qps[0].ah.sgid_index = 5;
         return p;
       }}},
      {"dgid-zero", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.dgid = Gid{};
         return p;
       }}},
      {"dgid-not-in-peer-table", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.dgid = G("::ffff:10.0.0.99");
         return p;
       }}},
      {"link-local-across-subnets", {[](Transport t) {
         Pair p = RocePair(t);
         p.local.path.sgid = p.local.gid_table[1];  // fe80::a, RoCE v2
         p.remote.gid_table.push_back(Entry(4, "2001:db8::b", GidType::kRoceV2));
         p.remote.path.sgid = p.remote.gid_table.back();
         return p;
       }}},
      {"hop-limit-too-low", {[](Transport t) {
         Pair p = RocePair(t);
         p.remote.gid_table.push_back(Entry(4, "::ffff:10.0.9.2", GidType::kRoceV2));
         p.remote.path.sgid = p.remote.gid_table.back();
         p.WithPlans().local_plan->qps[0].ah.hop_limit = 1;
         return p;
       }}},
      {"flow-label-out-of-range", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.flow_label = 0x100000;
         return p;
       }}},
      // rules_roce.cc
      {"grh-required", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.is_global = false;
         return p;
       }}},
      {"dlid-on-ethernet", {[](Transport t) {
         Pair p = RocePair(t);
         p.WithPlans().local_plan->qps[0].ah.dlid = 5;
         return p;
       }}},
      {"gid-type-mismatch", {[](Transport t) {
         Pair p = RocePair(t);
         p.local.path.sgid = p.local.gid_table[2];  // ::ffff:10.0.0.1, RoCE v1
         return p;
       }}},
      {"gid-family-mismatch", {[](Transport t) {
         Pair p = RocePair(t);
         p.local.gid_table.push_back(Entry(4, "2001:db8::a", GidType::kRoceV2));
         p.local.path.sgid = p.local.gid_table.back();
         return p;
       }}},
      {"traffic-class-mismatch", {[](Transport t) {
         Pair p = RocePair(t);
         p.local.path.traffic_class = 104;  // DSCP 26
         return p;
       }}},
      // rules_qkey.cc
      {"qkey-mismatch", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.keys.qkey = 0x22222222;
         return p;
       }}},
      {"qkey-controlled", {[](Transport t) {
         Pair p = IbPair(t);
         p.local.keys.qkey = 0x80000011;
         p.remote.keys.qkey = 0x80000011;
         return p;
       }}},
      // rules_sa.cc
      {"mtu-above-sa-path", {[](Transport t) {
         Pair p = IbPair(t);
         p.sa_path = AgreeingSaPath(p);
         p.sa_path->mtu = Mtu::k256;  // a narrow switch link between the two ports
         return p;
       }}},
      {"sl-not-sa-path", {[](Transport t) {
         Pair p = IbPair(t);
         p.sa_path = AgreeingSaPath(p);
         p.sa_path->sl = 3;
         return p;
       }}},
      {"pkey-not-sa-path", {[](Transport t) {
         Pair p = IbPair(t);
         p.sa_path = AgreeingSaPath(p);
         p.sa_path->pkey = 0x8001;
         return p;
       }}},
      {"grh-missing-across-routers", {[](Transport t) {
         Pair p = IbPair(t);
         p.sa_path = AgreeingSaPath(p);
         p.sa_path->hop_limit = 4;
         return p;
       }}},
      // rules_path.cc
      {"route-missing", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->route->table = 0;  // no table matched: the kernel assumed it on link
         return p;
       }}},
      {"route-other-netdev", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->route = RouteFact{"lo", "", "local", 255, 0};  // the address is local
         return p;
       }}},
      {"neighbour-failed", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->neighbour->state = NeighbourState::kFailed;
         p.roce_path->neighbour->mac.reset();
         return p;
       }}},
      {"neighbour-mac-mismatch", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->neighbour->state = NeighbourState::kPermanent;
         p.roce_path->neighbour->mac = MacAddress{0x02, 0, 0, 0, 0, 0x99};
         return p;
       }}},
      {"vlan-mismatch", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->netdev->vlan_id = 100;  // the peer's eth1 is untagged
         return p;
       }}},
      {"mtu-above-netdev", {[](Transport t) {
         Pair p = RocePairWithPath(t);
         p.roce_path->netdev->mtu = 1100;  // 1024 + 96 > 1100
         return p;
       }}},
  };
  return *table;
}

}  // namespace qpconnect::test
