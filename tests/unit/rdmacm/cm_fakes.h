// SPDX-License-Identifier: MIT
// Fakes of the connection manager's seams (rdmacm/src/cm_env.h), so that
// cm_table_test runs the CM's whole flow in one process without verbs,
// sockets, the engine thread or real time:
//
//   FakeCmLink  a link end: what it sends is kept (sent), in order; its
//               last_heard, unread bytes and failure are the test's to set;
//   FakeCmQp    an id's QP side: every call logged as "<what>" per id (the
//               ECE set on a QP kept apart, in ece_set and ece_after); the
//               validator or the device refuses when told to; a description
//               from an rxe-like RoCE device (fakes/roce_device.h), made
//               once per side and never freed (the CM caches encoded bases
//               by their address);
//   FakeClock   Now(), moved by the test;
//   FakeCmHost  Dial hands out the link the test gave it; ArmSweep counts;
//               After keeps the function, run when the test says.
//
// A CmSide holds one side's fakes, its device, its event channel and an
// environment over them. Nothing here knows the state table: the tests'
// expectations are their own.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cm_env.h"
#include "devices.h"
#include "events.h"
#include "fakes/roce_device.h"
#include "id_part.h"
#include "qpconnect/verbs/describe.h"
#include "state.h"

namespace qpconnect::rdmacm::testing {

using Clock = std::chrono::steady_clock;

inline sockaddr_storage Ipv4(const char* addr, uint16_t port) {
  sockaddr_storage s{};
  auto* in = reinterpret_cast<sockaddr_in*>(&s);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  inet_pton(AF_INET, addr, &in->sin_addr);
  return s;
}

class FakeCmLink : public CmLink {
 public:
  FakeCmLink(bool client, sockaddr_storage local, sockaddr_storage remote, std::string peer)
      : client_(client), local_(local), remote_(remote), peer_(std::move(peer)) {}

  void Send(const Message& msg) override { sent.push_back(msg); }
  const std::string& peer_text() const override { return peer_; }
  Clock::time_point last_heard() const override { return heard; }
  size_t Unread() override { return unread; }
  bool client() const override { return client_; }
  const sockaddr_storage& local() const override { return local_; }
  const sockaddr_storage& remote() const override { return remote_; }
  bool failed() const override { return is_failed; }

  std::vector<Message> sent;  // not yet delivered, in order
  Clock::time_point heard{};
  size_t unread = 0;
  bool is_failed = false;

 private:
  bool client_;
  sockaddr_storage local_, remote_;
  std::string peer_;
};

// One side's description: an rxe-like device whose RoCE v2 GID is
// ::ffff:10.99.0.<octet>, described once and kept for the process.
inline const verbs::LocalDescription& SideDescription(int octet) {
  static auto* made = new std::map<int, verbs::LocalDescription>;
  auto it = made->find(octet);
  if (it != made->end()) return it->second;
  const std::string gid = "::ffff:10.99.0." + std::to_string(octet);
  DeviceInfo dev =
      fakes::RxeDevice("rxe0", uint64_t{0x1122334455667700} + static_cast<uint64_t>(octet),
                       {fakes::RoceV2Gid(1, gid.c_str())}, {{0, 0xffff}});
  verbs::DescribeOptions o;
  o.host = "host-" + std::to_string(octet);
  auto d = verbs::DescribeFromDevice(dev, o);
  return made->emplace(octet, d ? *d : verbs::LocalDescription{}).first->second;
}

class FakeCmQp : public CmQp {
 public:
  explicit FakeCmQp(int octet) : octet_(octet) {}

  Result<void> Describe(Id* id) override {
    Log(id, "describe");
    if (refuse_describe)
      return Error(ErrorCode::kNotFound, ENODEV, "describe", "", "no such port (test)");
    const verbs::LocalDescription& d = SideDescription(octet_);
    id->described = &d;
    id->local = d.endpoint;
    if (id->psn == 0) id->psn = 0x1234;
    IdPart part;
    part.transport = id->pub.ps == RDMA_PS_UDP ? Transport::kUd : Transport::kRc;
    part.qkey = part.transport == Transport::kUd ? RDMA_UDP_QKEY : 0;
    part.initiator_depth = id->ours.initiator_depth;
    part.responder_resources = id->ours.responder_resources;
    part.qpn = (id->pub.qp != nullptr ? id->pub.qp->qp_num : id->ours.qp_num) & kQpnMask;
    part.psn = id->psn & kPsnMask;
    ApplyIdPart(id->local, part);
    return {};
  }
  Result<void> PlanAndValidate(Id* id, bool active, std::vector<Gid> link_ends) override {
    Log(id, "validate");
    last_active = active;
    last_link_ends = std::move(link_ends);
    if (!id->remote)
      return Error(ErrorCode::kProtocol, 0, "plan", "", "the peer's description is missing");
    if (refuse_validate)
      return Error(ErrorCode::kIncompatible, 0, "validate", "mtu-mismatch",
                   "1 error finding(s), first mtu-mismatch (test)");
    return {};
  }
  // The composer's apply as the library's: the GID re-check, then RTR and
  // RTS, each logged.
  Result<void> Connect(Id* id) override {
    if (gid_changed)
      return Error(ErrorCode::kIncompatible, 0, "validate", "sgid_index",
                   "the GID table changed before RTR; nothing was modified (test)");
    Log(id, "rtr");
    if (refuse_rtr)
      return Error(ErrorCode::kVerbs, EINVAL, "ibv_modify_qp INIT->RTR", "IBV_QP_PATH_MTU",
                   "path_mtu 4096 exceeds the port's active MTU (test)");
    Log(id, "rts");
    if (refuse_rts)
      return Error(ErrorCode::kVerbs, EIO, "ibv_modify_qp RTR->RTS", "IBV_QP_TIMEOUT", "(test)");
    return {};
  }
  // What the id's QP was set to (kept in ece_set, not in the calls) and
  // how many calls came before it (ece_after: 2 is after "describe
  // validate", before "rtr").
  Result<void> SetEce(Id* id, const Ece& ece) override {
    if (id->pub.qp == nullptr) return {};
    ece_set[id] = ece;
    ece_after[id] = calls_[id].size();
    return {};
  }
  void ToError(Id* id) override { Log(id, "error"); }
  ibv_ah_attr PeerAh(const Id* id) override {
    (void)id;
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.port_num = 1;
    return ah;
  }

  // The calls for `id`, in order ("describe", "validate", "rtr", "rts", "error").
  std::vector<std::string> calls(const Id* id) const {
    auto it = calls_.find(id);
    return it == calls_.end() ? std::vector<std::string>{} : it->second;
  }
  void Forget() { calls_.clear(); }

  bool refuse_describe = false;
  bool refuse_validate = false;
  bool gid_changed = false;  // Connect() refuses as a GID changed before RTR
  bool refuse_rtr = false;
  bool refuse_rts = false;
  bool last_active = false;
  std::vector<Gid> last_link_ends;
  std::map<const Id*, Ece> ece_set;
  std::map<const Id*, size_t> ece_after;

 private:
  void Log(const Id* id, const char* what) { calls_[id].push_back(what); }
  int octet_;
  std::map<const Id*, std::vector<std::string>> calls_;
};

class FakeClock : public CmClock {
 public:
  Clock::time_point Now() override { return now; }
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
};

class FakeCmHost : public CmHost {
 public:
  std::shared_ptr<CmLink> Dial(const sockaddr* peer, const sockaddr* source,
                               std::chrono::milliseconds timeout) override {
    (void)peer;
    (void)source;
    dial_timeout = timeout;
    ++dials;
    return dial_to;
  }
  void ArmSweep() override { ++sweeps_armed; }
  void After(std::chrono::milliseconds delay, std::function<void()> fn) override {
    later.push_back({delay, std::move(fn)});
  }
  Result<Placement> Place(const sockaddr* addr) override {
    (void)addr;
    if (!placement) return Error(ErrorCode::kNotFound, ENODEV, "place", "", "no device (test)");
    return *placement;
  }

  // Runs (and forgets) the functions After() kept so far.
  void RunLater() {
    auto now = std::move(later);
    later.clear();
    for (auto& [delay, fn] : now) fn();
  }

  std::shared_ptr<CmLink> dial_to;
  std::chrono::milliseconds dial_timeout{};
  int dials = 0;
  int sweeps_armed = 0;
  std::vector<std::pair<std::chrono::milliseconds, std::function<void()>>> later;
  std::optional<Placement> placement;
};

// One side of a connection: its fakes, device, channel and environment.
struct CmSide {
  CmSide(int octet_in, FakeClock& clock, std::chrono::milliseconds timeout)
      : octet(octet_in), qp(octet_in), env{qp, clock, host, timeout} {
    device.name = "rxe0";
    device.ports = 1;
    device.attr.max_qp_rd_atom = 16;
    device.attr.max_qp_init_rd_atom = 16;
    channel = NewChannel(false);
    int flags = fcntl(channel->pub.fd, F_GETFL);
    fcntl(channel->pub.fd, F_SETFL, flags | O_NONBLOCK);  // an empty channel: EAGAIN
    qp_struct.qp_num = 0x100u * static_cast<uint32_t>(octet_in) + 1;
    Placement p;
    p.device = &device;
    p.port = 1;
    p.how = "10.99.0." + std::to_string(octet_in) + " (test)";
    host.placement = p;
  }
  ~CmSide() { FreeChannel(channel); }
  CmSide(const CmSide&) = delete;
  CmSide& operator=(const CmSide&) = delete;

  // A new id on this side's channel and device (RC, or UD for RDMA_PS_UDP),
  // with a QP unless `with_qp` is false.
  Id* NewId(rdma_port_space ps = RDMA_PS_TCP, bool with_qp = true) {
    auto* id = new Id{};
    id->magic = kIdMagic;
    RegisterId(id);
    id->pub.channel = &channel->pub;
    id->pub.ps = ps;
    id->pub.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
    id->device = &device;
    id->pub.port_num = 1;
    id->mapping = "10.99.0." + std::to_string(octet) + " (test)";
    if (with_qp) id->pub.qp = &qp_struct;
    return id;
  }

  int octet;
  Device device;
  Channel* channel = nullptr;
  ibv_qp qp_struct{};
  FakeCmQp qp;
  FakeCmHost host;
  CmEnv env;
};

}  // namespace qpconnect::rdmacm::testing
