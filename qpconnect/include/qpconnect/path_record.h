// SPDX-License-Identifier: MIT
// PathRecord: what the InfiniBand subnet administrator (SA) says about the
// path between two ports (IBA 1.3 vol. 1, 15.2.5.16). The values a QP's
// address vector and RTR/RTS attributes need (DLID, SL, MTU, static rate,
// packet lifetime, P_Key, and across routers the GRH's hop limit, flow label
// and traffic class) come from here when the SA is asked, instead of being
// guessed (docs/ib-paths.md).
//
// Core type: no umad, no verbs. The wire codec and the resolver live in
// qpconnect/sa/path_resolver.h.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "qpconnect/endpoint.h"

namespace qpconnect {

struct PathRecord {
  uint64_t service_id = 0;
  Gid dgid{};
  Gid sgid{};
  uint16_t dlid = 0;
  uint16_t slid = 0;
  bool raw_traffic = false;
  uint32_t flow_label = 0;  // 20 bits
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  bool reversible = false;
  uint8_t numb_path = 0;   // 7 bits; in a reply, as the SA filled it
  uint16_t pkey = 0;       // with the membership bit (0x8000 = full member)
  uint16_t qos_class = 0;  // 12 bits
  uint8_t sl = 0;          // 4 bits
  uint8_t mtu_selector = 0;
  Mtu mtu = Mtu::kInvalid;  // IBA encoding: 1 = 256 ... 5 = 4096
  uint8_t rate_selector = 0;
  uint8_t rate = 0;  // IBA static-rate encoding (2 = 2.5 Gb/s, 3 = 10 Gb/s, ...)
  uint8_t packet_lifetime_selector = 0;
  uint8_t packet_lifetime = 0;  // 4.096 us * 2^value
  uint8_t preference = 0;
};

// The link rate that IBA rate code `rate` stands for, in Gb/s (0 when the code
// is reserved). Table 15.2.5.16's Rate field (2 = 2.5, 3 = 10, 4 = 30, 5 = 5,
// 6 = 20, 7 = 40, 8 = 60, 9 = 80, 10 = 120, 11 = 14, 12 = 56, ...).
double RateGbps(uint8_t rate);

// 4.096 us * 2^value, the IBA time encoding of PacketLifeTime (and of a QP's
// local ACK timeout). Values above 31 saturate at 31.
std::chrono::nanoseconds IbTimeValue(uint8_t value);

// The local ACK timeout to program for a path of this packet lifetime: the
// round trip is two lifetimes, so lifetime + 1 (the kernel's ib_cm, which
// rdma_cm connections use, starts from the same value and then allows for
// the HCA's ACK delay, which a PathRecord does not carry), capped at 31.
uint8_t AckTimeoutForPacketLifetime(uint8_t packet_lifetime);

}  // namespace qpconnect
