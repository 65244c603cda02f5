// SPDX-License-Identifier: MIT
// The C API's one MTU knob, without hardware: the `mtu` of qpc_adopt_options
// (and qpc_open_options) is the path MTU described as forced, so it is what
// this side announces, what its plan programs at RTR through
// qpc_connector_connect(), and what a peer that negotiates plans too; 0
// negotiates. Adopted fake QPs (tests/fakes/fake_env.h) stand in for the
// device, a scripted exchanger for the peer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_env.h"
#include "fakes/scripted_exchanger.h"
#include "internal.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/plan.h"
#include "qpconnect/qpconnect.h"

namespace qpconnect {
namespace {

using qpconnect::testing::FakeEnv;
using qpconnect::testing::ScriptedExchanger;

// A peer that negotiates: its own adopted fake QP, the port's active MTU
// (1024 on the fake rxe port) announced, not forced.
EndpointInfo NegotiatingPeer() {
  FakeEnv env("host-b", 2);
  ibv_qp* qp = env.AddQp(IBV_QPT_RC, 0x200);
  AdoptOptions o;
  o.qp_env = &env;
  auto c = Connector::Adopt({{qp, std::nullopt}}, o);
  EXPECT_TRUE(c) << c.error().ToString();
  return (*c)->Local();
}

// One side adopted through the C API's options with `mtu` bytes, connected
// by qpc_connector_connect() to NegotiatingPeer().
struct CSide {
  explicit CSide(uint32_t mtu) : env("host-a", 1) {
    qp = env.AddQp(IBV_QPT_RC, 0x100);
    qpc_adopt_options o;
    qpc_adopt_options_init(&o);
    o.mtu = mtu;
    auto a = capi::AdoptOptionsFrom("qpc_connector_adopt", &o);
    EXPECT_TRUE(a) << a.error().ToString();
    if (!a) return;
    a->qp_env = &env;  // the fake device in place of the verbs calls
    auto c = Connector::Adopt({{qp, std::nullopt}}, *a);
    EXPECT_TRUE(c) << c.error().ToString();
    if (c) handle.impl = std::move(*c);
  }

  // What this side publishes, read back from the C API's JSON.
  EndpointInfo Described() {
    char* json = nullptr;
    EXPECT_EQ(qpc_connector_local_json(&handle, &json, nullptr), QPC_OK);
    auto info = oob::DecodeJson(json == nullptr ? "" : json);
    qpc_string_free(json);
    EXPECT_TRUE(info) << info.error().ToString();
    return info ? *info : EndpointInfo{};
  }

  qpc_status Connect(const EndpointInfo& peer) {
    auto script = std::make_unique<ScriptedExchanger>(peer);
    exchanger = script.get();
    qpc_exchanger x;
    x.impl = std::move(script);
    qpc_connect_options co;
    qpc_connect_options_init(&co);
    co.timeout_ms = 100;
    qpc_error* err = nullptr;
    const qpc_status s = qpc_connector_connect(&handle, &x, &co, &err);
    EXPECT_EQ(s, QPC_OK) << qpc_error_message(err);
    qpc_error_free(err);
    published = exchanger->published();
    exchanger = nullptr;
    return s;
  }

  // The path_mtu of the RTR modify the fake QP received; 0 if none.
  int ProgrammedMtu() {
    for (const auto& [attr, mask] : env.fake(qp).calls()) {
      if ((mask & IBV_QP_STATE) && attr.qp_state == IBV_QPS_RTR && (mask & IBV_QP_PATH_MTU)) {
        return attr.path_mtu;
      }
    }
    return 0;
  }

  FakeEnv env;
  ibv_qp* qp = nullptr;
  qpc_connector handle;
  ScriptedExchanger* exchanger = nullptr;
  EndpointInfo published;  // what the peer received
};

TEST(CapiMtu, TheOpenAndAdoptOptionsMtuIsTheDescribedForcedMtu) {
  qpc_open_options o;
  qpc_open_options_init(&o);
  o.mtu = 2048;
  auto s = capi::SessionOptionsFrom("qpc_connector_open", &o);
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->mtu, Mtu::k2048);
  o.mtu = 0;
  s = capi::SessionOptionsFrom("qpc_connector_open", &o);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->mtu);

  qpc_adopt_options a;
  qpc_adopt_options_init(&a);
  a.mtu = 256;
  auto adopt = capi::AdoptOptionsFrom("qpc_connector_adopt", &a);
  ASSERT_TRUE(adopt) << adopt.error().ToString();
  EXPECT_EQ(adopt->mtu, Mtu::k256);
  a.mtu = 300;
  adopt = capi::AdoptOptionsFrom("qpc_connector_adopt", &a);
  ASSERT_FALSE(adopt);
  EXPECT_EQ(adopt.error().attribute, "mtu");
}

TEST(CapiMtu, OneKnobGovernsTheDescriptionThePlanAndThePeersPlan) {
  CSide a(512);
  ASSERT_TRUE(a.handle.impl);
  // Described: 512, forced (the fake port's active MTU is 1024).
  const EndpointInfo described = a.Described();
  EXPECT_EQ(described.path.path_mtu, Mtu::k512);
  EXPECT_TRUE(described.path.path_mtu_forced);

  // Planned and programmed: 512, although the peer offers 1024.
  const EndpointInfo peer = NegotiatingPeer();
  ASSERT_EQ(peer.path.path_mtu, Mtu::k1024);
  ASSERT_FALSE(peer.path.path_mtu_forced);
  ASSERT_EQ(a.Connect(peer), QPC_OK);
  const ConnectReport& r = a.handle.impl->report();
  ASSERT_TRUE(r.plan);
  EXPECT_EQ(r.plan->qps.at(0).path_mtu, Mtu::k512);
  EXPECT_EQ(a.ProgrammedMtu(), IBV_MTU_512);

  // The peer received it forced, and its plan follows it.
  EXPECT_EQ(a.published.path.path_mtu, Mtu::k512);
  EXPECT_TRUE(a.published.path.path_mtu_forced);
  EXPECT_EQ(PlanConnection(peer, a.published).qps.at(0).path_mtu, Mtu::k512);
}

TEST(CapiMtu, ZeroNegotiatesTheSmallerActiveMtu) {
  CSide a(0);
  ASSERT_TRUE(a.handle.impl);
  const EndpointInfo described = a.Described();
  EXPECT_EQ(described.path.path_mtu, Mtu::k1024);  // the port's active MTU
  EXPECT_FALSE(described.path.path_mtu_forced);

  // A peer that forced 256 is followed: the only way to agree.
  EndpointInfo peer = NegotiatingPeer();
  peer.path.path_mtu = Mtu::k256;
  peer.path.path_mtu_forced = true;
  ASSERT_EQ(a.Connect(peer), QPC_OK);
  EXPECT_EQ(a.handle.impl->report().plan->qps.at(0).path_mtu, Mtu::k256);
  EXPECT_EQ(a.ProgrammedMtu(), IBV_MTU_256);
}

}  // namespace
}  // namespace qpconnect
