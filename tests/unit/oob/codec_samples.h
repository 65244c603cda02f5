// SPDX-License-Identifier: MIT
// Sample endpoints for the codec tests: one per transport, and batches.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"

namespace qpconnect::oob::testing {

// InfiniBand RC, one QP, like ibv_rc_pingpong's record.
inline EndpointInfo SampleRc() {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.identity = {"node-a.example", "mlx5_0", 0x0002c90300010203ULL};
  e.port.port_num = 1;
  e.port.link_layer = LinkLayer::kInfiniBand;
  e.port.active = true;
  e.port.lid = 0x1a;
  e.port.sm_lid = 1;
  e.port.subnet_prefix = 0xfe80000000000000ULL;
  e.port.active_mtu = Mtu::k4096;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  e.path.sgid = GidEntry{0, *GidFromString("fe80::202:c9ff:fe01:203"), GidType::kIb,
                         GidFamily::kUnspecified, ""};
  e.keys.pkey = kDefaultPkey;
  e.rd_atomic = {4, 4, 16, 16};
  e.gid_table = {*e.path.sgid};
  e.qps = {{0x4b2, 0xabcdef, std::nullopt}};
  return e;
}

// RoCE v2 UC over IPv4, a GID table of three, two QPs with MRs.
inline EndpointInfo SampleUc() {
  EndpointInfo e;
  e.transport = Transport::kUc;
  e.identity = {"node-b", "rxe0", 0};
  e.port.port_num = 1;
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = Mtu::k1024;
  e.port.max_mtu = Mtu::k4096;
  e.port.grh_required = true;
  e.path.path_mtu = Mtu::k1024;
  e.path.use_grh = true;
  e.path.sgid =
      GidEntry{1, *GidFromString("::ffff:10.99.0.2"), GidType::kRoceV2, GidFamily::kIpv4, "eth1"};
  e.path.traffic_class = 106;
  e.path.hop_limit = 64;
  e.path.flow_label = 0xabcde;
  e.gid_table = {
      {0, *GidFromString("fe80::5054:ff:fe12:3456"), GidType::kRoceV1, GidFamily::kIpv6, "eth1"},
      {1, *GidFromString("::ffff:10.99.0.2"), GidType::kRoceV2, GidFamily::kIpv4, "eth1"},
      {2, *GidFromString("fd00::2"), GidType::kRoceV2, GidFamily::kIpv6, "eth1"},
  };
  e.qps = {{0x11, 0x123456, MrDescriptor{0x7f12345000ULL, 0x1234, 1 << 20}},
           {0x12, 0x000001, MrDescriptor{0x7f12346000ULL, 0x5678, 4096}}};
  return e;
}

// InfiniBand UD, three QPs with non-consecutive QPNs, a Q_Key override.
inline EndpointInfo SampleUd() {
  EndpointInfo e = SampleRc();
  e.transport = Transport::kUd;
  e.identity.host = "node-c";
  e.path.sl = 3;
  e.path.hop_limit = 64;
  e.path.src_path_bits = 1;
  e.port.lmc = 2;
  e.keys.pkey = 0x8001;
  e.keys.pkey_index = 2;
  e.keys.qkey = 0x11111111;
  e.keys.remote_qkey = 0x22222222;
  e.rd_atomic = {0, 0, 0, 0};
  e.qps = {{0x300, 0, std::nullopt}, {0x2ff, 0xffffff, std::nullopt}, {0xffffff, 7, std::nullopt}};
  return e;
}

// `n` QPs as a device hands them out: consecutive QPNs from `first_qpn`,
// random 24-bit PSNs (lrand48() & 0xffffff, as the pingpongs do).
inline EndpointInfo Batch(size_t n, uint32_t first_qpn = 0x000a00, bool with_mr = false) {
  EndpointInfo e = SampleRc();
  std::mt19937 rng(42);
  e.qps.clear();
  e.qps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    QpEntry qp;
    qp.qpn = (first_qpn + static_cast<uint32_t>(i)) & kQpnMask;
    qp.psn = static_cast<uint32_t>(rng()) & kPsnMask;
    if (with_mr)
      qp.mr =
          MrDescriptor{0x7f0000000000ULL + (i << 20), 0x100 + static_cast<uint32_t>(i), 1 << 20};
    e.qps.push_back(qp);
  }
  return e;
}

// A plan as qp-connect would record it for SampleRc() against a peer.
inline ConnectionPlan SamplePlan() {
  ConnectionPlan plan;
  plan.transport = Transport::kRc;
  plan.message_size = 4096;
  QpAttrs a;
  a.qp_num = 0x4b2;
  a.path_mtu = Mtu::k1024;
  a.dest_qp_num = 0x4b3;
  a.rq_psn = 0x123456;
  a.sq_psn = 0xabcdef;
  a.max_rd_atomic = 4;
  a.max_dest_rd_atomic = 4;
  a.ah.dlid = 0x1b;
  a.ah.is_global = true;
  a.ah.dgid = *GidFromString("fe80::202:c9ff:fe01:204");
  a.remote_qkey = 5;
  plan.qps.push_back(a);
  return plan;
}

}  // namespace qpconnect::oob::testing

namespace qpconnect::oob::testing {

// The example of docs/wire-format.md (and tests/testdata/oob/example_endpoint.json):
// RC over RoCE v2 / IPv4, two QPs, the first with an MR.
inline EndpointInfo ExampleEndpoint() {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.identity = {"node-a", "mlx5_0", 0x0c42a10300b1c2d3ULL};
  e.port.port_num = 1;
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = Mtu::k1024;
  e.port.max_mtu = Mtu::k4096;
  e.port.grh_required = true;
  e.path.path_mtu = Mtu::k1024;
  e.path.use_grh = true;
  e.path.sgid = GidEntry{3, *GidFromString("::ffff:192.0.2.10"), GidType::kRoceV2, GidFamily::kIpv4,
                         "ens1f0"};
  e.path.sl = 3;
  e.path.traffic_class = 106;
  e.path.hop_limit = 64;
  e.keys.pkey = kDefaultPkey;
  e.rd_atomic = {16, 16, 16, 16};
  e.gid_table = {
      {1, *GidFromString("fe80::e42:a1ff:feb1:c2d3"), GidType::kRoceV2, GidFamily::kIpv6, "ens1f0"},
      *e.path.sgid,
  };
  e.qps = {{0x1a4, 0x3f2c11, MrDescriptor{0x7f3a52000000ULL, 0x1f2e3d, 65536}},
           {0x1a5, 0x0b77e0, std::nullopt}};
  return e;
}

}  // namespace qpconnect::oob::testing

namespace qpconnect::oob::testing {

// ---- Protobuf wire bytes, written by hand (the encoding spec, "Message
// Structure": tag = field << 3 | wire type; 0 varint, 2 length-delimited).
inline std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
inline std::string VarintField(uint32_t field, uint64_t v) {
  return Varint(field << 3 | 0) + Varint(v);
}
inline std::string LenField(uint32_t field, const std::string& bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

}  // namespace qpconnect::oob::testing
