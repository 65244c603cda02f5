// SPDX-License-Identifier: MIT
// The host's McPlatform (multicast.h): IP groups joined through the kernel's
// socket API (IP_ADD_MEMBERSHIP, IPV6_JOIN_GROUP on the netdev's index: the
// kernel sends the IGMP or MLD report, and closing the socket leaves the
// group), QPs attached with libibverbs.
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "multicast.h"

namespace qpconnect::rdmacm {

namespace {

// A UDP socket holding the membership; closed, it leaves the group.
class SocketMembership : public IpMembership {
 public:
  explicit SocketMembership(int fd) : fd_(fd) {}
  ~SocketMembership() override { close(fd_); }
  SocketMembership(const SocketMembership&) = delete;
  SocketMembership& operator=(const SocketMembership&) = delete;

 private:
  int fd_;
};

class HostPlatform : public McPlatform {
 public:
  Result<std::unique_ptr<IpMembership>> JoinIpGroup(const sockaddr* group,
                                                    const std::string& netdev) override {
    const std::string what = "join the IP group on " + (netdev.empty() ? "?" : netdev);
    const unsigned ifindex = netdev.empty() ? 0 : if_nametoindex(netdev.c_str());
    if (ifindex == 0)
      return Error(ErrorCode::kNotFound, ENODEV, what, "netdev",
                   "the GID's netdev is unknown; no IP group can be joined");
    int fd = socket(group->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Error(ErrorCode::kIo, errno, what, "", "socket");
    auto owner = std::make_unique<SocketMembership>(fd);
    int rc;
    if (group->sa_family == AF_INET) {
      ip_mreqn req{};
      req.imr_multiaddr = reinterpret_cast<const sockaddr_in*>(group)->sin_addr;
      req.imr_ifindex = static_cast<int>(ifindex);
      rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &req, sizeof req);
    } else {
      ipv6_mreq req{};
      req.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6*>(group)->sin6_addr;
      req.ipv6mr_interface = ifindex;
      rc = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &req, sizeof req);
    }
    if (rc != 0)
      return Error(ErrorCode::kIo, errno, what, "",
                   group->sa_family == AF_INET ? "IP_ADD_MEMBERSHIP" : "IPV6_JOIN_GROUP");
    return std::unique_ptr<IpMembership>(std::move(owner));
  }

  Result<void> Attach(ibv_qp* qp, const ibv_gid& mgid) override {
    if (int rc = ibv_attach_mcast(qp, &mgid, 0); rc != 0)
      return Error(ErrorCode::kVerbs, rc > 0 ? rc : (errno != 0 ? errno : EIO), "ibv_attach_mcast");
    return {};
  }

  Result<void> Detach(ibv_qp* qp, const ibv_gid& mgid) override {
    if (int rc = ibv_detach_mcast(qp, &mgid, 0); rc != 0)
      return Error(ErrorCode::kVerbs, rc > 0 ? rc : (errno != 0 ? errno : EIO), "ibv_detach_mcast");
    return {};
  }
};

}  // namespace

McPlatform& HostMcPlatform() {
  static auto* platform = new HostPlatform;  // never freed: ids outlive static destructors
  return *platform;
}

}  // namespace qpconnect::rdmacm
