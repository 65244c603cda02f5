// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/kernel_path.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace qpconnect::verbs {
namespace {

std::string ErrnoText(int e) { return std::strerror(e); }

constexpr size_t kBufferBytes = 8192;  // MNL_SOCKET_BUFFER_SIZE's usual value; one reply fits

// One rtnetlink socket for a few requests, each answered by one message.
class RtNetlink {
 public:
  RtNetlink() = default;
  ~RtNetlink() {
    if (nl_ != nullptr) mnl_socket_close(nl_);
  }
  RtNetlink(const RtNetlink&) = delete;
  RtNetlink& operator=(const RtNetlink&) = delete;

  // 0, or the errno of opening or binding the socket.
  int Open() {
    nl_ = mnl_socket_open(NETLINK_ROUTE);
    if (nl_ == nullptr) return errno;
    if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) return errno;
    portid_ = mnl_socket_get_portid(nl_);
    return 0;
  }

  // A request header of `type` in the buffer, with `extra` bytes of family
  // header zeroed after it (returned through `body`).
  nlmsghdr* Start(uint16_t type, size_t extra, void** body) {
    std::memset(buf_.data(), 0, buf_.size());
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.data());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    nlh->nlmsg_seq = ++seq_ + static_cast<uint32_t>(std::time(nullptr));
    *body = mnl_nlmsg_put_extra_header(nlh, extra);
    return nlh;
  }

  // Sends `nlh` and runs `cb` on the reply. 0, or the errno the kernel (or
  // the socket) answered with.
  int Ask(nlmsghdr* nlh, mnl_cb_t cb, void* data) {
    const uint32_t seq = nlh->nlmsg_seq;
    if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return errno;
    const ssize_t n = mnl_socket_recvfrom(nl_, buf_.data(), buf_.size());
    if (n < 0) return errno;
    if (mnl_cb_run(buf_.data(), static_cast<size_t>(n), seq, portid_, cb, data) < 0) {
      return errno != 0 ? errno : EIO;
    }
    return 0;
  }

 private:
  mnl_socket* nl_ = nullptr;
  uint32_t portid_ = 0;
  uint32_t seq_ = 0;
  std::vector<char> buf_ = std::vector<char>(kBufferBytes);
};

// --- RTM_GETLINK ---------------------------------------------------------------

struct LinkReply {
  bool seen = false;
  NetdevInfo info;
};

int VlanDataAttr(const nlattr* a, void* data) {
  if (mnl_attr_get_type(a) == IFLA_VLAN_ID && mnl_attr_validate(a, MNL_TYPE_U16) >= 0) {
    static_cast<LinkReply*>(data)->info.vlan_id = mnl_attr_get_u16(a);
  }
  return MNL_CB_OK;
}

struct LinkInfo {
  bool vlan = false;
  const nlattr* data = nullptr;
};

int LinkInfoAttr(const nlattr* a, void* data) {
  auto* li = static_cast<LinkInfo*>(data);
  if (mnl_attr_get_type(a) == IFLA_INFO_KIND && mnl_attr_validate(a, MNL_TYPE_STRING) >= 0) {
    li->vlan = std::strcmp(mnl_attr_get_str(a), "vlan") == 0;
  } else if (mnl_attr_get_type(a) == IFLA_INFO_DATA) {
    li->data = a;
  }
  return MNL_CB_OK;
}

int LinkAttr(const nlattr* a, void* data) {
  auto* r = static_cast<LinkReply*>(data);
  switch (mnl_attr_get_type(a)) {
    case IFLA_ADDRESS:
      if (mnl_attr_get_payload_len(a) == r->info.mac.size()) {
        std::memcpy(r->info.mac.data(), mnl_attr_get_payload(a), r->info.mac.size());
      }
      break;
    case IFLA_MTU:
      if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) r->info.mtu = mnl_attr_get_u32(a);
      break;
    case IFLA_LINKINFO: {
      LinkInfo li;
      mnl_attr_parse_nested(a, LinkInfoAttr, &li);
      if (li.vlan && li.data != nullptr) mnl_attr_parse_nested(li.data, VlanDataAttr, r);
      break;
    }
    default:
      break;
  }
  return MNL_CB_OK;
}

int LinkMessage(const nlmsghdr* nlh, void* data) {
  if (nlh->nlmsg_type != RTM_NEWLINK) return MNL_CB_OK;
  auto* r = static_cast<LinkReply*>(data);
  r->seen = true;
  mnl_attr_parse(nlh, sizeof(ifinfomsg), LinkAttr, r);
  return MNL_CB_OK;
}

Result<NetdevInfo> GetLink(RtNetlink& nl, const std::string& name, int ifindex) {
  void* body = nullptr;
  nlmsghdr* nlh = nl.Start(RTM_GETLINK, sizeof(ifinfomsg), &body);
  auto* ifm = static_cast<ifinfomsg*>(body);
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = ifindex;
  mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
  LinkReply r;
  r.info.name = name;
  if (int e = nl.Ask(nlh, LinkMessage, &r); e != 0 || !r.seen) {
    if (e == 0) e = EIO;
    const ErrorCode code = e == ENODEV ? ErrorCode::kNotFound : ErrorCode::kIo;
    return Error{code, e, "rtnetlink RTM_GETLINK " + name, "", ErrnoText(e)};
  }
  return r.info;
}

// --- RTM_GETROUTE --------------------------------------------------------------

struct RouteReply {
  bool seen = false;
  int family = AF_INET;
  uint8_t type = RTN_UNSPEC;
  uint32_t table = 0;
  uint32_t oif = 0;
  std::string gateway;
  uint32_t mtu = 0;
};

std::string AddressText(int family, const void* bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, bytes, text, sizeof text) == nullptr) return "?";
  return text;
}

int MetricAttr(const nlattr* a, void* data) {
  if (mnl_attr_get_type(a) == RTAX_MTU && mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
    static_cast<RouteReply*>(data)->mtu = mnl_attr_get_u32(a);
  }
  return MNL_CB_OK;
}

int RouteAttr(const nlattr* a, void* data) {
  auto* r = static_cast<RouteReply*>(data);
  switch (mnl_attr_get_type(a)) {
    case RTA_TABLE:
      if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) r->table = mnl_attr_get_u32(a);
      break;
    case RTA_OIF:
      if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) r->oif = mnl_attr_get_u32(a);
      break;
    case RTA_GATEWAY:
      if (mnl_attr_get_payload_len(a) == (r->family == AF_INET ? 4u : 16u)) {
        r->gateway = AddressText(r->family, mnl_attr_get_payload(a));
      }
      break;
    case RTA_METRICS:
      mnl_attr_parse_nested(a, MetricAttr, r);
      break;
    default:
      break;
  }
  return MNL_CB_OK;
}

int RouteMessage(const nlmsghdr* nlh, void* data) {
  if (nlh->nlmsg_type != RTM_NEWROUTE) return MNL_CB_OK;
  auto* r = static_cast<RouteReply*>(data);
  const auto* rtm = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(nlh));
  r->seen = true;
  r->type = rtm->rtm_type;
  r->table = rtm->rtm_table;  // RTA_TABLE, when present, overrides (ids above 255)
  mnl_attr_parse(nlh, sizeof(rtmsg), RouteAttr, r);
  return MNL_CB_OK;
}

const char* RouteTypeName(uint8_t type) {
  switch (type) {
    case RTN_UNICAST:
      return "unicast";
    case RTN_LOCAL:
      return "local";
    case RTN_BROADCAST:
      return "broadcast";
    case RTN_ANYCAST:
      return "anycast";
    case RTN_MULTICAST:
      return "multicast";
    case RTN_BLACKHOLE:
      return "blackhole";
    case RTN_UNREACHABLE:
      return "unreachable";
    case RTN_PROHIBIT:
      return "prohibit";
    case RTN_THROW:
      return "throw";
    default:
      return "other";
  }
}

// Where `gid` puts its address for `family`.
const uint8_t* AddressBytes(const Gid& gid, int family) {
  return family == AF_INET ? gid.data() + 12 : gid.data();
}

std::string NetdevName(uint32_t ifindex) {
  char name[IF_NAMESIZE] = {};
  if (if_indextoname(ifindex, name) == nullptr) return "ifindex " + std::to_string(ifindex);
  return name;
}

void ReadRoute(RtNetlink& nl, const RocePathQuery& q, int family, int ifindex, RocePathFacts& f) {
  void* body = nullptr;
  nlmsghdr* nlh = nl.Start(RTM_GETROUTE, sizeof(rtmsg), &body);
  auto* rtm = static_cast<rtmsg*>(body);
  const size_t len = family == AF_INET ? 4 : 16;
  rtm->rtm_family = static_cast<uint8_t>(family);
  rtm->rtm_dst_len = static_cast<uint8_t>(len * 8);
  rtm->rtm_src_len = static_cast<uint8_t>(len * 8);
  rtm->rtm_flags = RTM_F_LOOKUP_TABLE;
  mnl_attr_put(nlh, RTA_DST, len, AddressBytes(q.remote, family));
  mnl_attr_put(nlh, RTA_SRC, len, AddressBytes(q.local.gid, family));
  mnl_attr_put_u32(nlh, RTA_OIF, static_cast<uint32_t>(ifindex));
  RouteReply r;
  r.family = family;
  const int e = nl.Ask(nlh, RouteMessage, &r);
  if (e == ENETUNREACH || e == EHOSTUNREACH || e == EACCES) {
    f.route_error = ErrnoText(e);
    return;
  }
  if (e != 0 || !r.seen) {
    f.route_unknown = "rtnetlink RTM_GETROUTE: " + ErrnoText(e != 0 ? e : EIO);
    return;
  }
  RouteFact route;
  route.netdev = r.oif != 0 ? NetdevName(r.oif) : std::string("none");
  route.gateway = r.gateway;
  route.type = RouteTypeName(r.type);
  route.table = r.table;
  route.mtu = r.mtu;
  f.route = std::move(route);
}

// --- RTM_GETNEIGH --------------------------------------------------------------

struct NeighReply {
  bool seen = false;
  uint16_t state = 0;
  std::optional<MacAddress> mac;
};

int NeighAttr(const nlattr* a, void* data) {
  auto* r = static_cast<NeighReply*>(data);
  if (mnl_attr_get_type(a) == NDA_LLADDR && mnl_attr_get_payload_len(a) == 6) {
    MacAddress mac{};
    std::memcpy(mac.data(), mnl_attr_get_payload(a), mac.size());
    r->mac = mac;
  }
  return MNL_CB_OK;
}

int NeighMessage(const nlmsghdr* nlh, void* data) {
  if (nlh->nlmsg_type != RTM_NEWNEIGH) return MNL_CB_OK;
  auto* r = static_cast<NeighReply*>(data);
  const auto* ndm = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  r->seen = true;
  r->state = ndm->ndm_state;
  mnl_attr_parse(nlh, sizeof(ndmsg), NeighAttr, r);
  return MNL_CB_OK;
}

NeighbourState StateOf(uint16_t nud) {
  if ((nud & NUD_PERMANENT) != 0) return NeighbourState::kPermanent;
  if ((nud & NUD_NOARP) != 0) return NeighbourState::kNoArp;
  if ((nud & NUD_REACHABLE) != 0) return NeighbourState::kReachable;
  if ((nud & NUD_STALE) != 0) return NeighbourState::kStale;
  if ((nud & NUD_DELAY) != 0) return NeighbourState::kDelay;
  if ((nud & NUD_PROBE) != 0) return NeighbourState::kProbe;
  if ((nud & NUD_FAILED) != 0) return NeighbourState::kFailed;
  if ((nud & NUD_INCOMPLETE) != 0) return NeighbourState::kIncomplete;
  return NeighbourState::kNone;
}

void ReadNeighbour(RtNetlink& nl, int family, const std::string& address, int ifindex,
                   const std::string& netdev, RocePathFacts& f) {
  uint8_t bytes[16] = {};
  if (inet_pton(family, address.c_str(), bytes) != 1) {
    f.neighbour_unknown = "the next hop " + address + " is not an address";
    return;
  }
  void* body = nullptr;
  nlmsghdr* nlh = nl.Start(RTM_GETNEIGH, sizeof(ndmsg), &body);
  auto* ndm = static_cast<ndmsg*>(body);
  ndm->ndm_family = static_cast<uint8_t>(family);
  ndm->ndm_ifindex = ifindex;
  mnl_attr_put(nlh, NDA_DST, family == AF_INET ? 4 : 16, bytes);
  NeighReply r;
  const int e = nl.Ask(nlh, NeighMessage, &r);
  if (e == ENOENT) {
    f.neighbour_unknown = "no neighbour entry for " + address + " on " + netdev +
                          " yet (the kernel resolves it at RTR)";
    return;
  }
  if (e != 0 || !r.seen) {
    f.neighbour_unknown = "rtnetlink RTM_GETNEIGH: " + ErrnoText(e != 0 ? e : EIO);
    return;
  }
  f.neighbour = NeighbourFact{address, netdev, StateOf(r.state), r.mac};
}

}  // namespace

Result<NetdevInfo> ReadNetdev(const std::string& name) {
  const unsigned ifindex = if_nametoindex(name.c_str());
  if (ifindex == 0) {
    return Error{ErrorCode::kNotFound, errno, "if_nametoindex " + name, "",
                 "no netdev named " + name};
  }
  RtNetlink nl;
  if (int e = nl.Open(); e != 0) {
    return Error{ErrorCode::kIo, e, "socket(NETLINK_ROUTE)", "", ErrnoText(e)};
  }
  return GetLink(nl, name, static_cast<int>(ifindex));
}

RocePathFacts ReadKernelPath(const RocePathQuery& query) {
  RocePathFacts f;
  f.query = query;
  const std::string& name = query.local.netdev;
  auto all_unknown = [&f](const std::string& why) {
    f.netdev_unknown = f.route_unknown = f.neighbour_unknown = why;
  };
  if (name.empty()) {
    all_unknown("the GID names no netdev");
    return f;
  }
  const unsigned ifindex = if_nametoindex(name.c_str());
  if (ifindex == 0) {
    all_unknown("no netdev named " + name + " (" + ErrnoText(errno) + ")");
    return f;
  }
  RtNetlink nl;
  if (int e = nl.Open(); e != 0) {
    all_unknown("socket(NETLINK_ROUTE): " + ErrnoText(e));
    return f;
  }
  auto link = GetLink(nl, name, static_cast<int>(ifindex));
  if (link) {
    f.netdev = std::move(*link);
  } else {
    f.netdev_unknown = link.error().operation + ": " + link.error().detail;
  }
  const int family = IsIpv4MappedGid(query.remote) ? AF_INET : AF_INET6;
  if (IsIpv4MappedGid(query.local.gid) != (family == AF_INET)) {
    f.route_unknown = f.neighbour_unknown =
        "the two GIDs are of different families (gid-family-mismatch)";
    return f;
  }
  ReadRoute(nl, query, family, static_cast<int>(ifindex), f);
  // The next hop: the gateway, or the peer on the link; asked on the netdev
  // the route leaves through (the GID's when the route is unknown).
  std::string hop = GidAddressText(query.remote);
  int hop_index = static_cast<int>(ifindex);
  std::string hop_netdev = name;
  if (f.route) {
    if (!f.route->gateway.empty()) hop = f.route->gateway;
    if (const unsigned i = if_nametoindex(f.route->netdev.c_str()); i != 0) {
      hop_index = static_cast<int>(i);
      hop_netdev = f.route->netdev;
    }
    if (f.route->type == "local") {
      f.neighbour_unknown = hop + " is a local address: no neighbour entry";
      return f;
    }
  }
  ReadNeighbour(nl, family, hop, hop_index, hop_netdev, f);
  return f;
}

}  // namespace qpconnect::verbs
