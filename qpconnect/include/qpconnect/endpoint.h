// SPDX-License-Identifier: MIT
// The endpoint model: what one side must tell the other before two QPs can be
// connected, in verbs-free value types.
//
// An EndpointInfo describes one side of an exchange: the transport, the facts
// of the port its QPs use (stated once, however many QPs there are), the path
// parameters it will use, the device limits the peer needs, and a list of QPs,
// each with its QPN, send PSN and optional memory-region descriptor.
//
// This header is the contract between the exchangers (which serialize it), the
// validator (which judges two of them) and the connector (which fills and uses
// them). It includes no verbs, Protobuf or Boost header. Enumerations whose
// numeric values equal libibverbs' are marked so; the verbs layer converts.
//
// Thread-safety: plain values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qpconnect {

enum class Transport : uint8_t { kRc = 1, kUc = 2, kUd = 3 };

enum class LinkLayer : uint8_t { kUnspecified = 0, kInfiniBand = 1, kEthernet = 2 };

// The kind of a GID table entry. RoCE v1 GIDs are carried over Ethernet with
// the RoCE ethertype; RoCE v2 GIDs over UDP/IP (port 4791).
enum class GidType : uint8_t { kUnspecified = 0, kIb = 1, kRoceV1 = 2, kRoceV2 = 3 };

// An Ethernet MAC address.
using MacAddress = std::array<uint8_t, 6>;
// "02:00:0a:63:00:01".
std::string MacToString(const MacAddress& mac);
// Parses "02:00:0a:63:00:01" (six two-digit hex groups, ':'); nullopt otherwise.
std::optional<MacAddress> MacFromString(const std::string& text);

// Address family of a RoCE GID: IPv4 when the GID is an IPv4-mapped IPv6
// address (::ffff:a.b.c.d), IPv6 otherwise. kUnspecified for IB GIDs.
enum class GidFamily : uint8_t { kUnspecified = 0, kIpv4 = 1, kIpv6 = 2 };

// Path MTU. Numeric values equal enum ibv_mtu (IBV_MTU_256 = 1 ...).
enum class Mtu : uint8_t { kInvalid = 0, k256 = 1, k512 = 2, k1024 = 3, k2048 = 4, k4096 = 5 };

// Bytes of `mtu` (256 .. 4096); 0 for kInvalid or an out-of-range value.
int MtuBytes(Mtu mtu);
// The Mtu for a byte count (256, 512, 1024, 2048, 4096); kInvalid otherwise.
Mtu MtuFromBytes(int bytes);
bool IsValidMtu(Mtu mtu);

using Gid = std::array<uint8_t, 16>;

// "fe80::202:c9ff:fe01:203" style text of a GID (RFC 5952 via inet_ntop).
std::string GidToString(const Gid& gid);
// Parses IPv6 text ("fe80::1", "::ffff:10.0.0.1"); nullopt if malformed.
std::optional<Gid> GidFromString(const std::string& text);
bool IsZeroGid(const Gid& gid);
// fe80::/10.
bool IsLinkLocalGid(const Gid& gid);
// ::ffff:0:0/96.
bool IsIpv4MappedGid(const Gid& gid);
// ff00::/8.
bool IsMulticastGid(const Gid& gid);
// Upper 64 bits, host byte order (the IB subnet prefix).
uint64_t GidSubnetPrefix(const Gid& gid);
// Family implied by the GID bytes for a RoCE GID; kUnspecified for kIb.
GidFamily FamilyOfGid(const Gid& gid, GidType type);

const char* TransportName(Transport t);  // "rc", "uc", "ud"
const char* LinkLayerName(LinkLayer l);  // "infiniband", "ethernet", "unspecified"
const char* GidTypeName(GidType t);      // "ib", "roce-v1", "roce-v2", "unspecified"
const char* GidFamilyName(GidFamily f);  // "ipv4", "ipv6", "unspecified"

// One entry of a port's GID table.
struct GidEntry {
  uint16_t index = 0;
  Gid gid{};
  GidType type = GidType::kUnspecified;
  GidFamily family = GidFamily::kUnspecified;
  std::string netdev;  // RoCE: the netdev the GID belongs to; may be empty
  // RoCE v2: the prefix length of the GID's address on its netdev (IPv4
  // 1..32, IPv6 1..128: "10.99.0.1/24"), published so that both sides of the
  // joint GID choice see which pairs share a subnet (address_prefix.h); 0
  // unknown (an older writer, a GID whose address the netdev no longer has).
  uint8_t prefix_len = 0;

  friend bool operator==(const GidEntry&, const GidEntry&) = default;
};

// P_Key value: bit 15 is the membership bit (1 = full, 0 = limited), bits
// 0-14 the partition. Matching compares the low 15 bits.
constexpr uint16_t kPkeyFullMember = 0x8000;
constexpr uint16_t kPkeyPartitionMask = 0x7fff;
constexpr uint16_t kDefaultPkey = 0xffff;
constexpr uint32_t kPsnMask = 0xffffff;  // PSNs and QPNs are 24-bit
constexpr uint32_t kQpnMask = 0xffffff;
constexpr uint32_t kFlowLabelMask = 0xfffff;  // the GRH flow label is 20 bits
constexpr uint16_t kMaxSgidIndex = 255;       // ibv_global_route.sgid_index is 8 bits

// How a side's GID in use (PathParams::sgid) was chosen, published so that
// both sides compute the same GID pair (gid_pair.h).
//   kOwn     chosen by this side alone and kept: a peer that does not take
//            part in the joint choice (older qpconnect, a trace, a dump)
//   kJoint   chosen automatically; the joint choice may replace it
//   kPinned  given by the user (-g, GidPreference::index) and kept
enum class GidChoice : uint8_t { kOwn = 0, kJoint = 1, kPinned = 2 };
const char* GidChoiceName(GidChoice c);  // "own", "joint", "pinned"

// Facts of the port a side's QPs use; stated once per exchange.
struct PortFacts {
  uint8_t port_num = 1;
  LinkLayer link_layer = LinkLayer::kUnspecified;
  bool active = false;  // port state ACTIVE
  uint16_t lid = 0;     // base LID (InfiniBand); 0 on Ethernet
  uint8_t lmc = 0;      // LIDs base .. base + 2^lmc - 1 are the port's
  uint16_t sm_lid = 0;
  uint64_t subnet_prefix = 0;  // host byte order
  Mtu active_mtu = Mtu::kInvalid;
  Mtu max_mtu = Mtu::kInvalid;
  bool grh_required = false;  // IBV_QPF_GRH_REQUIRED on the port

  friend bool operator==(const PortFacts&, const PortFacts&) = default;
};

// Path parameters a side will use to reach the peer (its address vector), and
// the GID it sends from.
struct PathParams {
  Mtu path_mtu = Mtu::kInvalid;  // the MTU this side offers, or programs if forced
  // True: this side programs path_mtu as-is (qp-connect -m, like the pingpong
  // examples' -m); false: it programs the negotiated minimum (PlanConnection).
  bool path_mtu_forced = false;
  // True: after the exchange this side takes its path (MTU, SL, rate, ACK
  // timeout) from the subnet administrator (qp-connect --path sa,
  // ConnectorOptions::path_source), so the peer's validator expects the
  // SA's values, not the negotiated ones, in this side's plan.
  bool path_from_sa = false;
  bool use_grh = false;                    // is_global
  std::optional<GidEntry> sgid;            // GID in use (index, bytes, type, family)
  GidChoice gid_choice = GidChoice::kOwn;  // how sgid was chosen
  uint8_t sl = 0;
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 1;
  uint32_t flow_label = 0;  // 20 bits
  uint8_t src_path_bits = 0;

  friend bool operator==(const PathParams&, const PathParams&) = default;
};

// Partition and (UD) queue key.
struct Keys {
  uint16_t pkey = kDefaultPkey;         // value incl. membership bit
  uint16_t pkey_index = 0;              // local only, for diagnostics
  uint32_t qkey = 0;                    // UD: the QP's Q_Key
  std::optional<uint32_t> remote_qkey;  // UD: Q_Key this side puts in send WRs, if it overrides

  friend bool operator==(const Keys&, const Keys&) = default;
};

// RDMA read/atomic depths (RC only).
struct RdAtomic {
  uint8_t max_rd_atomic = 1;                // outstanding reads/atomics this side initiates (RTS)
  uint8_t max_dest_rd_atomic = 1;           // reads/atomics this side accepts (RTR)
  uint32_t device_max_qp_rd_atom = 0;       // device limit (responder), 0 = unknown
  uint32_t device_max_qp_init_rd_atom = 0;  // device limit (initiator), 0 = unknown

  friend bool operator==(const RdAtomic&, const RdAtomic&) = default;
};

// A memory region the peer may target with RDMA READ/WRITE.
struct MrDescriptor {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint64_t length = 0;

  friend bool operator==(const MrDescriptor&, const MrDescriptor&) = default;
};

// One QP of a side.
struct QpEntry {
  uint32_t qpn = 0;  // 24-bit
  uint32_t psn = 0;  // 24-bit: the send PSN (the peer's rq_psn must equal it)
  std::optional<MrDescriptor> mr;

  friend bool operator==(const QpEntry&, const QpEntry&) = default;
};

// RoCE: one netdev behind the GID table (GidEntry::netdev), as the side's
// kernel sees it, published so that the peer can compare its neighbour entry
// and VLAN with it (issue 31; roce_path.h).
struct NetdevInfo {
  std::string name;      // as in GidEntry::netdev
  MacAddress mac{};      // its MAC: what the peer's neighbour entry should hold
  uint16_t vlan_id = 0;  // 802.1Q id when the netdev is a VLAN device; 0 untagged
  uint32_t mtu = 0;      // its MTU in bytes; 0 unknown

  friend bool operator==(const NetdevInfo&, const NetdevInfo&) = default;
};

// Who this side is, for diagnostics only.
struct Identity {
  std::string host;
  std::string device;
  uint64_t node_guid = 0;  // host byte order

  friend bool operator==(const Identity&, const Identity&) = default;
};

struct EndpointInfo {
  Transport transport = Transport::kRc;
  Identity identity;
  PortFacts port;
  PathParams path;
  Keys keys;
  RdAtomic rd_atomic;
  // GIDs this side accepts traffic for (the valid entries of its port's GID
  // table, or the subset it chooses to publish). May be empty when unknown.
  std::vector<GidEntry> gid_table;
  // RoCE: the netdevs of gid_table as the kernel saw them before the
  // exchange. Empty when unknown (an older peer, a trace, a dump).
  std::vector<NetdevInfo> netdevs;
  std::vector<QpEntry> qps;

  friend bool operator==(const EndpointInfo&, const EndpointInfo&) = default;
};

}  // namespace qpconnect
