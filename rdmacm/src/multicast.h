// SPDX-License-Identifier: MIT
// Multicast on RoCE without the kernel CM (rdma_join_multicast(3),
// rdma_join_multicast_ex(3), rdma_leave_multicast(3)): an id's joins.
//
// A join, as rdma_cm makes one on a RoCE port: the group's MGID derived from
// its IP address for the GID type in use (MulticastGid); on RoCE v2 and for
// a full member, the IP group joined on the GID's netdev (IGMP or MLD, so
// that the netdev and the switches deliver the group's packets; rxe and the
// NICs then filter their L2 address when the QP is attached); the id's QP
// attached to the MGID (ibv_attach_mcast) unless the join is send-only or the
// id has no QP; the MULTICAST_JOIN event's param.ud (JoinEventParams).
// InfiniBand ports (an SA MCMemberRecord join) are not supported: ENOSYS.
//
// The device and the host's sockets sit behind McPlatform, so that the joins
// run in unit tests over a fake (tests/unit/rdmacm/multicast_test.cc); the
// library's platform is HostMcPlatform (multicast_platform.cc).
//
// Thread-safety: McGroups is not synchronized; an id's (Id::groups) is used
// with library_mutex held (lock.h). The pure functions are thread-safe.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "state.h"

namespace qpconnect::rdmacm {

// The param.ud.qp_num and Q_Key of a MULTICAST_JOIN (rdma_cm's: sends go to
// the multicast QPN with the port space's Q_Key).
inline constexpr uint32_t kMulticastQpn = 0xffffff;
inline constexpr uint32_t kUdpQkey = 0x01234567;  // RDMA_UDP_QKEY

// rdma_cm's conditions for a join (its rdma_join_multicast): a UD id
// (RDMA_PS_UDP) on a device, bound or address resolved. kInvalidArgument
// (EINVAL) saying which is missing.
Result<void> CheckJoinable(const Id& id) QPCM_REQUIRES(library_mutex);

// True for an AF_INET or AF_INET6 multicast address (an IPv4-mapped one too).
bool IsMulticastAddress(const sockaddr* addr);

// Where an id joins: its port and the GID its address has there.
struct JoinSite {
  LinkLayer link_layer = LinkLayer::kEthernet;
  uint8_t port = 1;
  uint16_t sgid_index = 0;
  GidType gid_type = GidType::kRoceV2;
  std::string netdev;         // the GID's netdev ("veth0"); the IP group is joined there
  uint8_t traffic_class = 0;  // the id's TOS (rdma_set_option), 0 unset
};

// The id's join site from its port's description (devices.h's Describe):
// the GID of `source` (the id's address; RoCE v2 before v1), else the GID the
// description chose (an address mapped by QPCM_DEVICES has no GID of its
// own). kIncompatible with ENOSYS on an InfiniBand port; kNotFound with
// ENODEV when the port has no GID to use.
Result<JoinSite> PickJoinSite(const EndpointInfo& port, const sockaddr* source,
                              std::optional<uint8_t> tos);

// The group's MGID as rdma_cm derives it on RoCE: an IPv6 group is its own
// MGID; an IPv4 group is ::ffff:a.b.c.d on RoCE v2 and ff0e::ffff:a.b.c.d on
// RoCE v1. kInvalidArgument (EINVAL) for anything but an AF_INET or AF_INET6
// multicast address.
Result<ibv_gid> MulticastGid(const sockaddr* group, GidType type);

// What the MULTICAST_JOIN event carries in param.ud.
struct JoinParams {
  ibv_ah_attr ah{};  // GRH to the MGID from the site's GID; LID 0 (RoCE)
  uint32_t qp_num = kMulticastQpn;
  uint32_t qkey = kUdpQkey;
};
// rdma_cm's: hop limit 64 on RoCE v2 (the IP TTL), 1 on RoCE v1.
JoinParams JoinEventParams(const JoinSite& site, const ibv_gid& mgid);

// The host's membership of an IP group on a netdev, held until destroyed.
class IpMembership {
 public:
  virtual ~IpMembership() = default;
};

// The device and host calls a join makes.
class McPlatform {
 public:
  virtual ~McPlatform() = default;
  // Joins `group` (AF_INET or AF_INET6) on `netdev` (IGMP or MLD) until the
  // result is destroyed. kNotFound (ENODEV) for an unknown netdev, kIo with
  // the socket call's errno.
  virtual Result<std::unique_ptr<IpMembership>> JoinIpGroup(const sockaddr* group,
                                                            const std::string& netdev) = 0;
  // ibv_attach_mcast / ibv_detach_mcast; kVerbs with the errno.
  virtual Result<void> Attach(ibv_qp* qp, const ibv_gid& mgid) = 0;
  virtual Result<void> Detach(ibv_qp* qp, const ibv_gid& mgid) = 0;
};

// The platform over the host's sockets and libibverbs (multicast_platform.cc,
// in libqpcm only).
McPlatform& HostMcPlatform();

// One id's groups. Destroying it leaves every group: the QP detached, the IP
// membership dropped.
class McGroups {
 public:
  explicit McGroups(McPlatform& platform);
  ~McGroups();
  McGroups(const McGroups&) = delete;
  McGroups& operator=(const McGroups&) = delete;

  // Joins `group` at `site`: the MGID, the IP group (RoCE v2, not
  // send-only), `qp` attached (when given and not send-only). On success the
  // group is kept until Leave. kInvalidArgument: EINVAL for a bad group,
  // EADDRINUSE when this id joined it already; ENOSYS on InfiniBand; the
  // platform's errors otherwise, with nothing kept.
  Result<JoinParams> Join(const sockaddr* group, bool send_only, const JoinSite& site, ibv_qp* qp);
  // Leaves `group`: the QP detached, the IP membership dropped.
  // kNotFound (EADDRNOTAVAIL) when this id has not joined it.
  Result<void> Leave(const sockaddr* group);
  // The QP leaves every group it is attached to (rdma_destroy_qp: a QP with
  // attachments cannot be destroyed); the IP memberships stay.
  void DetachQp();
  size_t size() const { return members_.size(); }

 private:
  struct Member;
  McPlatform& platform_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace qpconnect::rdmacm
