// SPDX-License-Identifier: MIT
// librdmacm's entry points for channels, ids, addresses and events.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "address.h"
#include "cm.h"
#include "cm_machine.h"
#include "devices.h"
#include "events.h"
#include "link.h"
#include "log.h"
#include "multicast.h"
#include "newer_calls.h"
#include "ports.h"
#include "qp.h"
#include "state.h"
#include "sync.h"
#include "warm.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

namespace {

bool IsAfIb(const sockaddr* addr) { return addr != nullptr && addr->sa_family == AF_IB; }

// Gives `id` the device that serves its source address. An address no device
// serves fails with ENODEV, as rdma_cm fails it, and is said once per address:
// programs probe with it (libfabric's verbs provider binds every address of
// every netdev to find which have a device).
int Place(Id* id, const sockaddr* addr, const char* call) QPCM_REQUIRES(library_mutex) {
  auto placed = PlaceAddress(addr);
  if (!placed)
    return Fail(
        ENODEV,
        std::string(call) + ": " + placed.error().detail + " (ENODEV; said once for this address)",
        std::string(call) + " " + HostText(addr));
  id->device = placed->device;
  id->pub.verbs = placed->device->ctx;
  id->pub.port_num = placed->port;
  id->gid_index = placed->gid_index.value_or(kAutoGid);
  id->mapping = placed->how;
  return 0;
}

// Whether `id` may hold the port of `addr` beside the other ids of its port
// space that hold one (ports.h: REUSEADDR and AFONLY as rdma_cm has them);
// 0, or the errno with the reason logged. `reuseaddr`: false at rdma_listen.
int CheckPort(Id* id, const sockaddr* addr, bool reuseaddr, const char* call)
    QPCM_REQUIRES(library_mutex) {
  std::vector<PortUser> others;
  std::vector<const Id*> owners;
  ForEachId([&](Id* other) QPCM_REQUIRES(library_mutex) {
    if (other == id || !other->listener || other->pub.ps != id->pub.ps) return;
    const sockaddr* bound = &other->pub.route.addr.src_addr;
    others.push_back({bound, other->reuseaddr, EffectiveAfOnly(bound->sa_family, other->afonly),
                      other->state == IdState::kListening});
    owners.push_back(other);
  });
  const PortUser self{addr, id->reuseaddr, EffectiveAfOnly(addr->sa_family, id->afonly), false};
  size_t with = 0;
  const int err = PortConflict(self, others, reuseaddr, &with);
  if (err == 0) return 0;
  const PortUser& other = others[with];
  auto yes = [](bool b) { return b ? "set" : "not set"; };
  return Fail(err, std::string(call) + ": " + AddressText(addr) + ": port " +
                       std::to_string(PortOf(addr)) + " is held by an id " +
                       (other.listening ? "listening on " : "bound to ") + AddressText(other.addr) +
                       " (REUSEADDR " + yes(self.reuseaddr) + " here, " + yes(other.reuseaddr) +
                       " there; AFONLY " + yes(self.afonly) + " here, " + yes(other.afonly) +
                       " there: rdma_cm's port rules, docs/rdmacm.md#addresses)");
}

// An AF-only IPv6 wildcard listener holds the port's IPv4 wildcard too
// (ports.h, HoldsIpv4ForRefusal), unless an IPv4 id holds the port: what
// arrives there is refused (cm.cc: REJECTED 28, as rdma_cm rejects an IPv4
// request to such a listener). Best effort: where the port's IPv4 wildcard
// is taken by another socket, an IPv4 client finds nobody listening.
void OpenIpv4Refuser(Id* id, int backlog) QPCM_REQUIRES(library_mutex) {
  const sockaddr* bound = &id->pub.route.addr.src_addr;
  if (!HoldsIpv4ForRefusal(bound, EffectiveAfOnly(bound->sa_family, id->afonly))) return;
  bool ipv4_holds = false;
  ForEachId([&](Id* other) QPCM_REQUIRES(library_mutex) {
    const sockaddr* a = &other->pub.route.addr.src_addr;
    if (other != id && other->listener && a->sa_family == AF_INET && PortOf(a) == PortOf(bound))
      ipv4_holds = true;
  });
  if (ipv4_holds) return;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(PortOf(bound));
  auto refuser = Listener::Bind(reinterpret_cast<const sockaddr*>(&any));
  if (!refuser) {
    QPCM_DEBUG_LINE("no IPv4 refuser beside " + AddressText(bound) + ": " +
                    refuser.error().ToString());
    return;
  }
  if (auto ok = (*refuser)->Listen(backlog); !ok) {
    QPCM_DEBUG_LINE("no IPv4 refuser beside " + AddressText(bound) + ": " + ok.error().ToString());
    return;
  }
  id->ipv4_refuser = *refuser;
}

// The IPv4 refusers on `port`, taken from their ids for the caller to close
// (without library_mutex): an IPv4 id is taking the port.
std::vector<std::shared_ptr<Listener>> TakeIpv4Refusers(uint16_t port)
    QPCM_REQUIRES(library_mutex) {
  std::vector<std::shared_ptr<Listener>> taken;
  ForEachId([&](Id* other) QPCM_REQUIRES(library_mutex) {
    if (other->ipv4_refuser && other->ipv4_refuser->port() == port)
      taken.push_back(std::move(other->ipv4_refuser));
  });
  return taken;
}

// The source address the kernel would use to reach `dst` (a UDP socket's
// connect picks it, and sends nothing).
bool RouteSource(const sockaddr* dst, sockaddr_storage& src) {
  int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, dst, AddressLength(dst)) == 0;
  socklen_t len = sizeof src;
  ok = ok && getsockname(fd, reinterpret_cast<sockaddr*>(&src), &len) == 0;
  close(fd);
  if (ok) SetPort(reinterpret_cast<sockaddr*>(&src), 0);
  return ok;
}

void FillPathRecord(Id* id) {
  auto* path = static_cast<ibv_sa_path_rec*>(std::calloc(1, sizeof(ibv_sa_path_rec)));
  if (path == nullptr) return;
  ibv_port_attr port{};
  if (id->pub.verbs != nullptr) ibv_query_port(id->pub.verbs, id->pub.port_num, &port);
  path->pkey = htons(0xffff);
  path->mtu = port.active_mtu;
  path->mtu_selector = 2;  // exactly
  path->packet_life_time = 16;
  path->packet_life_time_selector = 2;
  path->rate = 3;  // 10 Gb/s (RoCE reports the netdev's rate; a placeholder here)
  path->rate_selector = 2;
  path->hop_limit = 64;
  path->reversible = 1;
  path->numb_path = 1;
  std::free(id->pub.route.path_rec);
  id->pub.route.path_rec = path;
  id->pub.route.num_paths = 1;
}

// Completes a synchronous id's call: waits for its event without the lock.
int Finish(Id* id, LibraryLock& lock)
    // Lets go of the caller's lock for a synchronous id's wait (the
    // caller's LibraryLock knows it is released; its scope ends soon after):
    // the analysis cannot follow a lock passed by reference.
    QPCM_NO_THREAD_SAFETY_ANALYSIS {
  if (!IsSync(id)) return 0;
  lock.unlock();
  return Complete(id);
}

}  // namespace

extern "C" {

rdma_event_channel* rdma_create_event_channel(void) {
  {
    LibraryLock lock;
    auto devices = Devices();
    if (!devices) {
      LogLine("rdma_create_event_channel: " + devices.error().detail);
      errno = ENODEV;
      return nullptr;
    }
  }
  Channel* channel = NewChannel(false);
  return channel != nullptr ? &channel->pub : nullptr;
}

void rdma_destroy_event_channel(rdma_event_channel* channel) {
  LibraryLock lock;
  if (Channel* c = ChannelOf(channel)) FreeChannel(c);
}

int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** out, void* context,
                   rdma_port_space ps) {
  if (out == nullptr) return Fail(EINVAL, "rdma_create_id: no place for the id");
  if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP)
    return Fail(ENOSYS,
                "rdma_create_id: port space " + std::to_string(ps) +
                    " is not supported (RDMA_PS_TCP and RDMA_PS_UDP are; see docs/rdmacm.md)");
  LibraryLock lock;
  if (auto devices = Devices(); !devices)
    return Fail(ENODEV, "rdma_create_id: " + devices.error().detail);
  Channel* ch = nullptr;
  if (channel != nullptr && (ch = ChannelOf(channel)) == nullptr)
    return Fail(EINVAL, "rdma_create_id: not an event channel of this library");
  auto* id = new Id{};
  id->magic = kIdMagic;
  if (ch == nullptr) {
    id->own_channel = NewChannel(true);
    if (id->own_channel == nullptr) {
      int err = errno;
      delete id;
      return Fail(err, "rdma_create_id: no eventfd for a synchronous id");
    }
    ch = id->own_channel;
  }
  id->pub.channel = &ch->pub;
  id->pub.context = context;
  id->pub.ps = ps;
  id->pub.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
  RegisterId(id);
  *out = &id->pub;
  WarmUpOnce();  // while the program resolves and creates its QPs
  return 0;
}

namespace {

// What an id holds in the library, freed with it: its queued events, its
// handle, a synchronous id's kept event and channel, the path record.
// REQUIRES: library_mutex held, the id forgotten by its peer (Forget).
void FreeId(Id* id) QPCM_REQUIRES(library_mutex) {
  DropEvents(id);
  UnregisterId(id);
  if (Event* kept = id->pub.event != nullptr ? EventOf(id->pub.event) : nullptr) AckEvent(kept);
  if (id->own_channel != nullptr) FreeChannel(id->own_channel);
  std::free(id->pub.route.path_rec);
  id->groups.reset();  // the groups left: the QP detached, the IP memberships dropped
  LeaveQpToProgram(id);
  id->magic = 0;
  delete id;
}

}  // namespace

int rdma_destroy_id(rdma_cm_id* cm_id) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  // librdmacm's contract: the program acks every event it took for this id
  // first, and rdma_destroy_id waits until it has (another thread may still
  // be handling one; rping's event thread is). Its queued events, and those
  // of requests this listener received that the program never saw, are
  // dropped under the channel's lock in the same step that reads the count,
  // so no rdma_get_cm_event can hold the id after it; while this waits (the
  // lock released), the engine may queue more, hence the loop.
  const uint32_t handle = id->handle;
  std::vector<Id*> children;
  const auto started = std::chrono::steady_clock::now();
  bool said = false;
  for (;;) {
    if (Channel* ch = ChannelOf(id->pub.channel)) {
      MutexGuard guard(ch->mu);
      size_t known = children.size();
      for (Event* e : ch->queue)
        if (e->ev.listen_id == &id->pub && e->ev.id != &id->pub)
          children.push_back(reinterpret_cast<Id*>(e->ev.id));
      DropEventsLocked(ch, id);
      for (size_t i = known; i < children.size(); ++i) DropEventsLocked(ch, children[i]);
    }
    // Read after the drop: no queued event names the id any more, so the
    // count can only fall.
    const uint32_t unacked = id->unacked.load();
    if (unacked == 0) break;
    // An ack lowers the count without the lock and notifies; one that
    // lands between this check and the wait is seen at the next poll.
    AckedCv().wait_for(lock, std::chrono::milliseconds(50));
    if ((id = FindId(handle)) == nullptr) return errno = EINVAL, -1;  // destroyed meanwhile
    if (!said && std::chrono::steady_clock::now() - started > std::chrono::seconds(5)) {
      LogLine("rdma_destroy_id: waiting for the program to ack " + std::to_string(unacked) +
              " event(s) it took for this id (librdmacm waits for them too)");
      said = true;
    }
  }
  // The requests the program never saw: refused (the clients get REJECTED
  // at once) and their ids freed with it.
  for (Id* child : children) {
    Forget(child);
    FreeId(child);
  }
  Forget(id);  // the id is idle now: no request finds it while its socket closes
  auto listener = std::move(id->listener);
  auto refuser = std::move(id->ipv4_refuser);
  if (listener || refuser) {
    lock.unlock();
    if (listener) listener->Close();
    if (refuser) refuser->Close();
    lock.lock();
  }
  FreeId(id);
  return 0;
}

int rdma_bind_addr(rdma_cm_id* cm_id, sockaddr* addr) {
  if (IsAfIb(addr)) return Fail(ENOSYS, "rdma_bind_addr: AF_IB addresses are not supported");
  if (addr == nullptr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
    return Fail(EAFNOSUPPORT, "rdma_bind_addr: an AF_INET or AF_INET6 address is needed");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (id->bound || FindCmRow(id->state, CmInput::kBind) == nullptr)
    return Fail(EINVAL, "rdma_bind_addr: the id is already bound");
  // A loopback address is bound with no device, as rdma_cm binds it (in the
  // lab: 127.0.0.1 and ::1 bound, id->verbs NULL); libfabric's verbs
  // provider binds "localhost" in every fi_getinfo and fails without it.
  if (!IsWildcard(addr) && !IsLoopback(addr) && Place(id, addr, "rdma_bind_addr") != 0) return -1;
  std::memset(&id->pub.route.addr.src_storage, 0, sizeof(sockaddr_storage));
  std::memcpy(&id->pub.route.addr.src_storage, addr, AddressLength(addr));
  // A named port is a TCP port this id may listen on: taken now, so that
  // EADDRINUSE comes from rdma_bind_addr as natively. Port 0 takes no socket
  // (a thousand bound active ids hold no descriptor); rdma_listen picks one.
  if (PortOf(addr) != 0) {
    if (CheckPort(id, addr, id->reuseaddr, "rdma_bind_addr") != 0) return -1;
    if (addr->sa_family == AF_INET) {
      if (auto refusers = TakeIpv4Refusers(PortOf(addr)); !refusers.empty()) {
        lock.unlock();
        for (auto& r : refusers) r->Close();
        lock.lock();
      }
    }
    auto listener = Listener::Bind(addr, id->afonly);
    if (!listener)
      return Fail(listener.error().sys_errno, "rdma_bind_addr: " + listener.error().ToString());
    id->listener = *listener;
  }
  id->bound = true;
  return Transition(DefaultCmEnv(), id, CmInput::kBind);
}

int rdma_resolve_addr(rdma_cm_id* cm_id, sockaddr* src, sockaddr* dst, int timeout_ms) {
  (void)timeout_ms;  // resolution is local and immediate
  if (IsAfIb(src) || IsAfIb(dst))
    return Fail(ENOSYS, "rdma_resolve_addr: AF_IB addresses are not supported");
  if (dst == nullptr || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
    return Fail(EINVAL, "rdma_resolve_addr: an AF_INET or AF_INET6 destination is needed");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (CheckCall(id, CmInput::kResolveAddr) != 0) return -1;
  sockaddr_storage source{};
  if (src != nullptr && src->sa_family != AF_UNSPEC) {
    std::memcpy(&source, src, AddressLength(src));
  } else if (id->bound && !IsWildcard(&id->pub.route.addr.src_addr)) {
    source = id->pub.route.addr.src_storage;
  } else if (!RouteSource(dst, source)) {
    EventSpec spec;
    spec.type = RDMA_CM_EVENT_ADDR_ERROR;
    spec.status = -ENETUNREACH;
    LogLine("rdma_resolve_addr: no route to " + AddressText(dst));
    PostEvent(id, spec);
    return Finish(id, lock);
  }
  std::memset(&id->pub.route.addr.dst_storage, 0, sizeof(sockaddr_storage));
  std::memcpy(&id->pub.route.addr.dst_storage, dst, AddressLength(dst));
  if (!id->bound) id->pub.route.addr.src_storage = source;
  auto placed = PlaceAddress(reinterpret_cast<sockaddr*>(&source));
  if (!placed) {
    LogLine("rdma_resolve_addr: " + placed.error().detail);
    EventSpec spec;
    spec.type = RDMA_CM_EVENT_ADDR_ERROR;
    spec.status = -ENODEV;
    PostEvent(id, spec);
  } else {
    id->device = placed->device;
    id->pub.verbs = placed->device->ctx;
    id->pub.port_num = placed->port;
    id->gid_index = placed->gid_index.value_or(kAutoGid);
    id->mapping = placed->how;
    id->pub.route.addr.addr.ibaddr.pkey = htons(0xffff);
    // What rdma_connect needs, started now so that it is ready by then while
    // the program creates its QP: the port's description (read once per
    // process) and the link to the peer (TCP and HELLO, once per peer). The
    // warm-up (warm.h) waits for the link's first write: run now, it held
    // the link's connect back by 70 ms at N = 1 (QPCM_DEBUG timeline).
    (void)Describe(*id->device, id->pub.port_num, placed->gid_index);
    // A multicast group has no peer to dial (mckey resolves its group).
    if (!IsMulticastAddress(dst))
      (void)Link::Dial(dst, &id->pub.route.addr.src_addr, AnswerTimeout());
    (void)Transition(DefaultCmEnv(), id, CmInput::kResolveAddr);  // ADDR_RESOLVED
  }
  return Finish(id, lock);
}

int rdma_resolve_route(rdma_cm_id* cm_id, int timeout_ms) {
  (void)timeout_ms;
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (CheckCall(id, CmInput::kResolveRoute) != 0) return -1;
  FillPathRecord(id);
  (void)Transition(DefaultCmEnv(), id, CmInput::kResolveRoute);  // ROUTE_RESOLVED
  return Finish(id, lock);
}

int rdma_listen(rdma_cm_id* cm_id, int backlog) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (CheckCall(id, CmInput::kListen) != 0) return -1;  // idle, bound or listening
  if (id->state == IdState::kListening) return Transition(DefaultCmEnv(), id, CmInput::kListen);
  if (!id->listener) {  // unbound (the wildcard) or bound to port 0: an ephemeral TCP port
    if (!id->bound) {
      sockaddr_in any{};
      any.sin_family = AF_INET;
      std::memcpy(&id->pub.route.addr.src_storage, &any, sizeof any);
    }
    auto listener = Listener::Bind(&id->pub.route.addr.src_addr, id->afonly);
    if (!listener)
      return Fail(listener.error().sys_errno, "rdma_listen: " + listener.error().ToString());
    id->listener = *listener;
    SetPort(&id->pub.route.addr.src_addr, id->listener->port());
  }
  // A listening id shares its port with nobody (rdma_cm checks it again
  // here for an id bound with REUSEADDR, and then clears the option).
  if (id->reuseaddr) {
    if (CheckPort(id, &id->pub.route.addr.src_addr, false, "rdma_listen") != 0) return -1;
    id->reuseaddr = false;
  }
  if (auto ok = id->listener->Listen(backlog); !ok)
    return Fail(ok.error().sys_errno, "rdma_listen: " + ok.error().ToString());
  if (Transition(DefaultCmEnv(), id, CmInput::kListen) != 0) return -1;
  OpenIpv4Refuser(id, backlog);
  WarmUpOnce();
  if (id->device != nullptr)  // bound to an address: describe its port before the first request
    (void)Describe(
        *id->device, id->pub.port_num,
        id->gid_index == kAutoGid ? std::nullopt : std::optional<uint16_t>(id->gid_index));
  return 0;
}

int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
  Channel* ch = ChannelOf(channel);
  if (ch == nullptr || event == nullptr) return errno = EINVAL, -1;
  int taken = TakeEvent(ch, event, /*hold=*/true);
  if (taken == 0)
    QPCM_DEBUG_LINE(std::string("event ") + EventName(EventCode(**event)) + " taken id " +
                    std::to_string(EventOf(*event)->handle));
  return taken;
}

int rdma_ack_cm_event(rdma_cm_event* event) {
  Event* e = EventOf(event);
  if (e == nullptr) return -1;
  if (e->holder != nullptr) {  // taken by rdma_get_cm_event: no lock needed
    AckEvent(e);
    return 0;
  }
  LibraryLock lock;
  // A synchronous id keeps its last event in id->event; acked, it is gone.
  if (Id* id = FindId(e->handle); id != nullptr && id->pub.event == event) id->pub.event = nullptr;
  AckEvent(e);
  return 0;
}

// rdma_write_cm_event(3): an RDMA_CM_EVENT_USER event with the program's
// status and value (param.arg) on the id's channel, for the program's own
// signalling (waking a thread blocked on the channel); any other type is
// EINVAL, as librdmacm's.
int rdma_write_cm_event(rdma_cm_id* cm_id, rdma_cm_event_type event, int status, uint64_t arg) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return WriteUserEvent(id, EventCodeOf(event), status, arg);
}

const char* rdma_event_str(rdma_cm_event_type event) { return EventName(EventCodeOf(event)); }

__be16 rdma_get_src_port(rdma_cm_id* cm_id) { return htons(PortOf(&cm_id->route.addr.src_addr)); }

__be16 rdma_get_dst_port(rdma_cm_id* cm_id) { return htons(PortOf(&cm_id->route.addr.dst_addr)); }

ibv_context** rdma_get_devices(int* num_devices) {
  LibraryLock lock;
  auto devices = Devices();
  if (!devices) {
    LogLine("rdma_get_devices: " + devices.error().detail);
    if (num_devices) *num_devices = 0;
    errno = ENODEV;
    return nullptr;
  }
  size_t n = (*devices)->size();
  auto** list = static_cast<ibv_context**>(std::calloc(n + 1, sizeof(ibv_context*)));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < n; ++i) list[i] = (**devices)[i]->ctx;
  if (num_devices) *num_devices = static_cast<int>(n);
  return list;
}

void rdma_free_devices(ibv_context** list) { std::free(list); }

int rdma_set_option(rdma_cm_id* cm_id, int level, int optname, void* optval, size_t optlen) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (optval == nullptr) return Fail(EINVAL, "rdma_set_option: no value");
  if (level == RDMA_OPTION_ID) {
    switch (optname) {
      case RDMA_OPTION_ID_TOS:
        if (optlen != sizeof(uint8_t))
          return Fail(EINVAL, "rdma_set_option TOS: a uint8_t is needed");
        id->tos = *static_cast<uint8_t*>(optval);
        return 0;
      case RDMA_OPTION_ID_REUSEADDR: {
        if (optlen != sizeof(int))
          return Fail(EINVAL, "rdma_set_option REUSEADDR: an int is needed");
        // As rdma_cm: set on an id that does not listen, cleared only while idle.
        const bool reuse = *static_cast<int*>(optval) != 0;
        if (!((reuse && id->state != IdState::kListening) || id->state == IdState::kIdle))
          return Fail(EINVAL, "rdma_set_option REUSEADDR: the id listens or is past its bind");
        id->reuseaddr = reuse;
        return 0;
      }
      case RDMA_OPTION_ID_AFONLY:
        if (optlen != sizeof(int)) return Fail(EINVAL, "rdma_set_option AFONLY: an int is needed");
        // As rdma_cm: before the id listens or resolves (idle or bound).
        if (id->state != IdState::kIdle && id->state != IdState::kBound)
          return Fail(EINVAL, "rdma_set_option AFONLY: the id is past its bind");
        id->afonly = *static_cast<int*>(optval) != 0;
        return 0;
      case RDMA_OPTION_ID_ACK_TIMEOUT:
        if (optlen != sizeof(uint8_t))
          return Fail(EINVAL, "rdma_set_option ACK_TIMEOUT: a uint8_t is needed");
        id->ack_timeout = *static_cast<uint8_t*>(optval);
        return 0;
      default:
        break;
    }
  }
  if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
    return Fail(
        ENOSYS,
        "rdma_set_option RDMA_OPTION_IB_PATH is not supported (the path comes from the exchange)");
  return Fail(ENOSYS, "rdma_set_option: level " + std::to_string(level) + " option " +
                          std::to_string(optname) + " is not supported");
}

int rdma_migrate_id(rdma_cm_id* cm_id, rdma_event_channel* channel) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  Channel* to = nullptr;
  if (channel != nullptr) {
    to = ChannelOf(channel);
    if (to == nullptr) return -1;
  }
  Channel* from = ChannelOf(id->pub.channel);
  Channel* old_own = id->own_channel;
  if (to == nullptr) {  // synchronous from now on: a private channel
    to = NewChannel(true);
    if (to == nullptr) return -1;
    id->own_channel = to;
  } else {
    id->own_channel = nullptr;
  }
  MoveEvents(id, from, to);
  id->pub.channel = &to->pub;
  if (old_own != nullptr && old_own != to) FreeChannel(old_own);
  return 0;
}

int rdma_notify(rdma_cm_id* cm_id, ibv_event_type) {
  LibraryLock lock;
  return IdOf(cm_id) != nullptr ? 0 : -1;
}

}  // extern "C"
