// SPDX-License-Identifier: MIT
#include "multicast.h"

#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "log.h"
#include "sockaddr.h"

namespace qpconnect::rdmacm {

namespace {

bool IsMulticast(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in*>(&a)->sin_addr.s_addr));
  if (a.ss_family == AF_INET6)
    return IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr);
  return false;
}

}  // namespace

bool IsMulticastAddress(const sockaddr* addr) {
  return addr != nullptr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6) &&
         IsMulticast(Unmapped(addr));
}

namespace {

std::string GroupText(const sockaddr* group) { return HostText(group); }

// The QP's attachment to an MGID, detached when destroyed.
class QpAttachment {
 public:
  QpAttachment(McPlatform& platform, ibv_qp* qp, const ibv_gid& mgid)
      : platform_(platform), qp_(qp), mgid_(mgid) {}
  ~QpAttachment() {
    if (auto ok = platform_.Detach(qp_, mgid_); !ok)
      LogLine("rdma_leave_multicast: " + ok.error().ToString());
  }
  QpAttachment(const QpAttachment&) = delete;
  QpAttachment& operator=(const QpAttachment&) = delete;

 private:
  McPlatform& platform_;
  ibv_qp* qp_;
  ibv_gid mgid_;
};

}  // namespace

Result<void> CheckJoinable(const Id& id) {
  if (id.pub.ps != RDMA_PS_UDP || id.pub.qp_type != IBV_QPT_UD)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_join_multicast", "ps",
                 "multicast needs a UD id (RDMA_PS_UDP)");
  if (id.device == nullptr)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_join_multicast", "",
                 "the id has no device: bind it to a device's address or resolve one first");
  if (id.state != IdState::kBound && id.state != IdState::kAddrResolved)
    return Error(
        ErrorCode::kInvalidArgument, EINVAL, "rdma_join_multicast", "",
        std::string("the id is ") + IdStateName(id.state) + ", not bound or address resolved");
  return {};
}

Result<JoinSite> PickJoinSite(const EndpointInfo& port, const sockaddr* source,
                              std::optional<uint8_t> tos) {
  if (port.port.link_layer == LinkLayer::kInfiniBand)
    return Error(ErrorCode::kIncompatible, ENOSYS, "rdma_join_multicast", "link_layer",
                 "InfiniBand multicast (an SA MCMemberRecord join) is not supported; "
                 "multicast works on RoCE ports");
  std::optional<GidEntry> chosen;
  ibv_gid wanted{};
  if (source != nullptr && AddressGid(source, wanted)) {
    for (GidType type : {GidType::kRoceV2, GidType::kRoceV1}) {
      auto it = std::find_if(port.gid_table.begin(), port.gid_table.end(), [&](const GidEntry& e) {
        return e.type == type && std::memcmp(e.gid.data(), wanted.raw, 16) == 0;
      });
      if (it != port.gid_table.end()) {
        chosen = *it;
        break;
      }
    }
  }
  if (!chosen) chosen = port.path.sgid;
  if (!chosen || (chosen->type != GidType::kRoceV1 && chosen->type != GidType::kRoceV2))
    return Error(ErrorCode::kNotFound, ENODEV, "rdma_join_multicast", "sgid_index",
                 "the port has no RoCE GID for the id's address");
  JoinSite site;
  site.link_layer = port.port.link_layer;
  site.port = port.port.port_num;
  site.sgid_index = chosen->index;
  site.gid_type = chosen->type;
  site.netdev = chosen->netdev;
  site.traffic_class = tos.value_or(0);
  return site;
}

Result<ibv_gid> MulticastGid(const sockaddr* group, GidType type) {
  if (group == nullptr || (group->sa_family != AF_INET && group->sa_family != AF_INET6))
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_join_multicast", "addr",
                 "the group must be an AF_INET or AF_INET6 address");
  const sockaddr_storage g = Unmapped(group);
  if (!IsMulticast(g))
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_join_multicast", "addr",
                 GroupText(group) + " is not a multicast address");
  ibv_gid mgid{};
  if (g.ss_family == AF_INET6) {
    std::memcpy(mgid.raw, &reinterpret_cast<const sockaddr_in6*>(&g)->sin6_addr, 16);
    return mgid;
  }
  // The IPv4-mapped form; RoCE v1 (no IP header) marks it as an IPv6
  // multicast GID of global scope, ff0e::ffff:a.b.c.d.
  if (type == GidType::kRoceV1) {
    mgid.raw[0] = 0xff;
    mgid.raw[1] = 0x0e;
  }
  mgid.raw[10] = mgid.raw[11] = 0xff;
  std::memcpy(&mgid.raw[12], &reinterpret_cast<const sockaddr_in*>(&g)->sin_addr, 4);
  return mgid;
}

JoinParams JoinEventParams(const JoinSite& site, const ibv_gid& mgid) {
  JoinParams p;
  p.ah.dlid = 0;  // no multicast LID on Ethernet
  p.ah.sl = 0;
  p.ah.static_rate = 0;  // the port's rate
  p.ah.is_global = 1;
  p.ah.port_num = site.port;
  p.ah.grh.dgid = mgid;
  p.ah.grh.sgid_index = static_cast<uint8_t>(site.sgid_index);
  p.ah.grh.hop_limit = site.gid_type == GidType::kRoceV2 ? 64 : 1;
  p.ah.grh.traffic_class = site.traffic_class;
  p.ah.grh.flow_label = 0;
  return p;
}

struct McGroups::Member {
  sockaddr_storage group{};
  // Made in this order, destroyed in reverse: the QP leaves the group
  // before the host does.
  std::unique_ptr<IpMembership> ip;
  std::unique_ptr<QpAttachment> attached;
};

McGroups::McGroups(McPlatform& platform) : platform_(platform) {}
McGroups::~McGroups() = default;

Result<JoinParams> McGroups::Join(const sockaddr* group, bool send_only, const JoinSite& site,
                                  ibv_qp* qp) {
  if (site.link_layer == LinkLayer::kInfiniBand)
    return Error(ErrorCode::kIncompatible, ENOSYS, "rdma_join_multicast", "link_layer",
                 "InfiniBand multicast (an SA MCMemberRecord join) is not supported");
  auto mgid = MulticastGid(group, site.gid_type);
  if (!mgid) return std::move(mgid).error();
  for (const auto& m : members_)
    if (SameAddress(reinterpret_cast<const sockaddr*>(&m->group), group))
      return Error(ErrorCode::kInvalidArgument, EADDRINUSE, "rdma_join_multicast", "addr",
                   "the id has joined " + GroupText(group) + " already");
  auto member = std::make_unique<Member>();
  member->group = Unmapped(group);
  // The IP header of RoCE v2 makes the group an IP group: the host joins
  // it on the GID's netdev, so that its packets are delivered there. A
  // send-only member receives nothing and joins nothing (as rdma_cm).
  if (site.gid_type == GidType::kRoceV2 && !send_only) {
    auto ip = platform_.JoinIpGroup(reinterpret_cast<const sockaddr*>(&member->group), site.netdev);
    if (!ip) return std::move(ip).error();
    member->ip = std::move(*ip);
  }
  if (qp != nullptr && !send_only) {
    if (auto ok = platform_.Attach(qp, *mgid); !ok) return std::move(ok).error();
    member->attached = std::make_unique<QpAttachment>(platform_, qp, *mgid);
  }
  members_.push_back(std::move(member));
  return JoinEventParams(site, *mgid);
}

Result<void> McGroups::Leave(const sockaddr* group) {
  if (group == nullptr || (group->sa_family != AF_INET && group->sa_family != AF_INET6))
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_leave_multicast", "addr",
                 "the group must be an AF_INET or AF_INET6 address");
  auto it = std::find_if(members_.begin(), members_.end(), [&](const auto& m) {
    return SameAddress(reinterpret_cast<const sockaddr*>(&m->group), group);
  });
  if (it == members_.end())
    return Error(ErrorCode::kNotFound, EADDRNOTAVAIL, "rdma_leave_multicast", "addr",
                 "the id has not joined " + GroupText(group));
  members_.erase(it);
  return {};
}

void McGroups::DetachQp() {
  for (auto& m : members_) m->attached.reset();
}

}  // namespace qpconnect::rdmacm
