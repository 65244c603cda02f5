// SPDX-License-Identifier: MIT
// The handlers of cm_flow.h: each names its input and hands it to
// Transition (cm_machine.h); what happens then is the state table's
// (cm_table.h). What is left here is what comes before an id exists or
// which id an input concerns: a REQ finding its listener, the links' ids, the
// sweep's deadlines.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cm_bases.h"
#include "cm_flow.h"
#include "cm_machine.h"
#include "log.h"
#include "overdue.h"
#include "ports.h"
#include "qpconnect/oob/codec.h"
#include "sockaddr.h"

namespace qpconnect::rdmacm {
namespace {

using Clock = std::chrono::steady_clock;

// The id listening where `local` was reached (ports.h's ListenerMatch): the
// same port, and the same address (any spelling: a dual-stack socket's
// ::ffff:a.b.c.d is a.b.c.d) or a wildcard that takes its family; a specific
// address wins over a wildcard, and among wildcards the one of the request's
// own family. A listening id's address holds its TCP port (rdma_bind_addr's,
// or the one rdma_listen picked).
Id* FindListener(const sockaddr_storage& local) QPCM_REQUIRES(library_mutex) {
  const auto* addr = reinterpret_cast<const sockaddr*>(&local);
  const int family = Unmapped(addr).ss_family;
  Id* found = nullptr;
  int best = 0;
  ForEachId([&](Id* id) QPCM_REQUIRES(library_mutex) {
    if (id->state != IdState::kListening) return;
    const sockaddr* bound = &id->pub.route.addr.src_addr;
    int match = ListenerMatch(bound, EffectiveAfOnly(bound->sa_family, id->afonly), addr);
    if (match == 0) return;
    match = match * 2 + (bound->sa_family == family ? 1 : 0);
    if (match > best) {
      best = match;
      found = id;
    }
  });
  return found;
}

void RefuseRequest(CmLink& link, const Message& msg, uint16_t reason, const std::string& why) {
  LogLine("refused a connection request from " + link.peer_text() + ": " + why);
  Message rej;
  rej.type = MsgType::kRej;
  rej.dst = msg.src;
  rej.reason = reason;
  rej.text = why;
  link.Send(rej);
}

// A request that finds no listener on its link's address waits this long for
// one before it is refused: perftest's -R server destroys its first
// listening id and listens again on the same port for the data connection,
// and the client's next REQ, sent at once on the same link, can come first.
// rdma_cm's REQ would find the new listener there, its client being slower
// (two resolve round trips in the kernel).
constexpr std::chrono::milliseconds kRelistenGrace{2000};
constexpr std::chrono::milliseconds kRelistenPoll{20};

void DispatchRequest(CmEnv& env, const std::shared_ptr<CmLink>& link, const Message& msg,
                     std::optional<Result<EndpointInfo>>& decoded);

// The parked requests of `link` (its book's), in order: while no id
// listens, they wait (polled every kRelistenPoll); then each goes on, or,
// its grace over, is refused.
void DrainParked(CmEnv& env, const std::shared_ptr<CmLink>& link) QPCM_REQUIRES(library_mutex) {
  auto& parked = link->book.parked;
  while (!parked.empty() && !link->failed()) {
    if (FindListener(link->local()) == nullptr &&
        env.clock.Now() - parked.front().since < kRelistenGrace) {
      env.host.After(kRelistenPoll, [&env, link] {
        LibraryLock lock;
        DrainParked(env, link);
      });
      return;
    }
    CmLink::ParkedRequest request = std::move(parked.front());
    parked.pop_front();
    DispatchRequest(env, link, request.msg, request.decoded);
  }
  parked.clear();
}

void OnRequest(CmEnv& env, const std::shared_ptr<CmLink>& link, const Message& msg,
               std::optional<Result<EndpointInfo>>& decoded) QPCM_REQUIRES(library_mutex) {
  QPCM_DEBUG_LINE("REQ from " + link->peer_text());
  auto& parked = link->book.parked;
  if (!parked.empty()) {  // behind the parked ones, in order
    parked.push_back({msg, std::move(decoded), env.clock.Now()});
    return;
  }
  if (FindListener(link->local()) == nullptr) {
    // An id listening on the port that takes no request from here (an
    // AF-only IPv6 wildcard and an IPv4 client): rdma_cm rejects at once.
    std::vector<const sockaddr*> listening;
    const sockaddr* in_the_way = nullptr;
    ForEachId([&](Id* id) QPCM_REQUIRES(library_mutex) {
      if (id->state != IdState::kListening || id->pub.ps != msg.port_space) return;
      listening.push_back(&id->pub.route.addr.src_addr);
    });
    const auto* local = reinterpret_cast<const sockaddr*>(&link->local());
    if (WhenNoListenerTakes(listening, local) == Unmatched::kRefuseNow) {
      for (const sockaddr* bound : listening)
        if (PortOf(bound) == PortOf(local)) in_the_way = bound;
      return RefuseRequest(*link, msg, kRejectConsumer,
                           "the id listening on " + AddressText(in_the_way) +
                               " takes no request for " + AddressText(local) +
                               " (AFONLY, or another address)");
    }
    parked.push_back({msg, std::move(decoded), env.clock.Now()});
    return DrainParked(env, link);
  }
  DispatchRequest(env, link, msg, decoded);
}

// A request for the listener of its link's address: refused if there is
// none, if its port space differs or its description does not decode; else a
// new id in the listener's image, which the REQ takes to kRequest.
void DispatchRequest(CmEnv& env, const std::shared_ptr<CmLink>& link, const Message& msg,
                     std::optional<Result<EndpointInfo>>& decoded) QPCM_REQUIRES(library_mutex) {
  Id* listener = FindListener(link->local());
  auto refuse = [&](uint16_t reason, const std::string& why) {
    RefuseRequest(*link, msg, reason, why);
  };
  if (listener == nullptr)
    return refuse(kRejectInvalidServiceId, "nobody listens on this port any more (waited " +
                                               std::to_string(kRelistenGrace.count()) +
                                               " ms for a new listener)");
  if (msg.port_space != static_cast<uint16_t>(listener->pub.ps))
    return refuse(kRejectInvalidServiceId, "the listener's port space is " +
                                               std::to_string(listener->pub.ps) +
                                               ", the request's " + std::to_string(msg.port_space));
  auto remote = PeerDescription(*link, msg, &decoded);
  if (!remote)
    return refuse(kRejectConsumer, "its description does not decode: " + remote.error().ToString());
  // Where the client reached this process decides the device.
  auto& book = link->book;
  if (!book.placement && !book.placement_error) {
    if (listener->device != nullptr) {
      Placement p;
      p.device = listener->device;
      p.port = listener->pub.port_num;
      if (listener->gid_index != kAutoGid) p.gid_index = listener->gid_index;
      p.how = listener->mapping;
      book.placement = p;
    } else if (auto placed = env.host.Place(reinterpret_cast<const sockaddr*>(&link->local()))) {
      book.placement = *placed;
    } else {
      book.placement_error = placed.error();
    }
  }
  if (book.placement_error) return refuse(kRejectInvalidServiceId, book.placement_error->detail);

  auto* id = new Id{};
  id->magic = kIdMagic;
  RegisterId(id);
  id->pub.channel = listener->pub.channel;
  id->pub.context = listener->pub.context;
  id->pub.ps = listener->pub.ps;
  id->pub.qp_type = listener->pub.qp_type;
  id->device = book.placement->device;
  id->pub.verbs = id->device->ctx;
  id->pub.port_num = book.placement->port;
  id->gid_index = book.placement->gid_index.value_or(kAutoGid);
  id->mapping = book.placement->how;
  // An IPv4 client of a dual-stack listener: the new id's addresses are
  // IPv4, as rdma_cm's (its REQ carries the client's IP version), not the
  // socket's ::ffff:a.b.c.d. The listener keeps the program's spelling.
  id->pub.route.addr.src_storage = Unmapped(reinterpret_cast<const sockaddr*>(&link->local()));
  std::memcpy(&id->pub.route.addr.dst_storage, &msg.src_addr, sizeof(sockaddr_storage));
  id->ep_qp_attr = listener->ep_qp_attr;
  id->link = link;
  id->peer_handle = msg.src;
  id->theirs = msg.params;
  id->remote = std::move(*remote);
  CmCause cause;
  cause.msg = &msg;
  cause.listener = listener;
  (void)Transition(env, id, CmInput::kReq, cause);
}

// Which REP this is, for the id it answers.
CmInput ReplyInput(const Id* id) {
  if (id->pub.ps == RDMA_PS_UDP) return CmInput::kSidrRep;
  return id->pub.qp == nullptr ? CmInput::kRepNoQp : CmInput::kRep;
}

std::string Millis(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// Why an id gives up on its answer (the sweep's kDeadline).
void LogOverdue(const CmEnv& env, const Id* id, Clock::time_point now, Clock::time_point heard)
    QPCM_REQUIRES(library_mutex) {
  std::string peer = id->link ? id->link->peer_text() : std::string("the peer");
  if (id->acknowledged) {
    LogLine("no reply from " + peer + " within " + Millis(now - id->connect_started) +
            " ms (its program received the request and never answered it): UNREACHABLE");
    return;
  }
  LogLine(std::string(id->state == IdState::kConnecting ? "no reply" : "no RTU") + " from " + peer +
          " within " + std::to_string(env.answer_timeout.count()) + " ms" +
          (id->link && heard != Clock::time_point{}
               ? " (nothing heard from it for " + Millis(now - heard) + " ms)"
               : std::string()) +
          ": UNREACHABLE");
}

}  // namespace

void OnMessage(CmEnv& env, const std::shared_ptr<CmLink>& link, const Message& msg) {
  // A base's bytes decode before the lock: the program's threads need not
  // wait for it.
  std::optional<Result<EndpointInfo>> decoded;
  if ((msg.type == MsgType::kReq || msg.type == MsgType::kRep) && !msg.endpoint.empty())
    decoded = oob::DecodeBinary(msg.endpoint);
  LibraryLock lock;
  if (msg.type == MsgType::kReq) {
    if (link->client()) return;  // only a listener's links take requests
    return OnRequest(env, link, msg, decoded);
  }
  if (msg.type == MsgType::kMra) {  // the peer holds the requests it has of ours
    ForEachId([&](Id* id) QPCM_REQUIRES(library_mutex) {
      if (id->link == link) (void)Transition(env, id, CmInput::kMra);
    });
    return;
  }
  Id* id = FindId(msg.dst);
  if (id == nullptr || id->link != link) {
    // The id was destroyed meanwhile; a DREQ's sender waits for an answer.
    if (msg.type == MsgType::kDreq) {
      Message drep;
      drep.type = MsgType::kDrep;
      drep.dst = msg.src;
      link->Send(drep);
    }
    return;
  }
  CmInput input;
  switch (msg.type) {
    case MsgType::kRep:
      input = ReplyInput(id);
      break;
    case MsgType::kRej:
      input = CmInput::kRej;
      break;
    case MsgType::kRtu:
      input = CmInput::kRtu;
      break;
    case MsgType::kDreq:
      input = CmInput::kDreq;
      break;
    case MsgType::kDrep:
      input = CmInput::kDrep;
      break;
    default:
      return;
  }
  CmCause cause;
  cause.msg = &msg;
  cause.decoded = &decoded;
  (void)Transition(env, id, input, cause);
}

void OnLinkDown(CmEnv& env, const std::shared_ptr<CmLink>& link, CmInput input,
                std::string_view text) {
  LibraryLock lock;
  bool logged = false;
  ForEachId([&](Id* id) QPCM_REQUIRES(library_mutex) {
    if (id->link != link) return;
    if (!logged && input != CmInput::kLinkProtocol) {  // the link logged those
      LogLine(std::string(text) + " [" + id->mapping + "]");
      logged = true;
    }
    (void)Transition(env, id, input);
    id->link.reset();  // whatever the row: the link is gone
  });
}

void Sweep(CmEnv& env) QPCM_REQUIRES(library_mutex) {
  const auto now = env.clock.Now();
  bool waiting = false;
  std::vector<const CmLink*> mra_sent;  // this sweep's MRAs: one per link
  CmCause cause;
  cause.now = now;
  cause.mra_sent = &mra_sent;
  ForEachId([&](Id* id) QPCM_REQUIRES(library_mutex) {
    switch (id->state) {
      case IdState::kDisconnected:  // our DREQ waits for its DREP
        if (id->disconnect_reported || !id->link) return;
        if (now < id->deadline) {
          waiting = true;
          return;
        }
        (void)Transition(env, id, CmInput::kDeadline, cause);
        return;
      case IdState::kRequest:  // the program holds a request: an MRA when due
        if (!id->link) return;
        waiting = true;
        if (now >= id->deadline) (void)Transition(env, id, CmInput::kDeadline, cause);
        return;
      case IdState::kConnecting:  // a REQ waits for its REP
      case IdState::kAccepted:    // a REP waits for its RTU
        break;
      default:
        return;
    }
    if (now < id->deadline) {
      waiting = true;
      return;
    }
    // A REP or RTU late while the peer keeps sending waits on (overdue.h);
    // bytes of the peer's still unread here count as heard now.
    size_t unread = id->link ? id->link->Unread() : 0;
    auto heard = id->link ? (unread > 0 ? now : id->link->last_heard()) : Clock::time_point{};
    if (id->link && PeerStillTalking(now, id->connect_started, heard, env.answer_timeout)) {
      CmCause talking = cause;
      talking.heard = heard;
      (void)Transition(env, id, CmInput::kPeerTalking, talking);
      waiting = true;
      return;
    }
    LogOverdue(env, id, now, heard);
    (void)Transition(env, id, CmInput::kDeadline, cause);
  });
  if (waiting) env.host.ArmSweep();
}

int Connect(CmEnv& env, Id* id, const rdma_conn_param* param) {
  QPCM_DEBUG_LINE("rdma_connect id " + std::to_string(id->handle));
  CmCause cause;
  cause.param = param;
  return Transition(env, id, CmInput::kConnect, cause);
}

int Accept(CmEnv& env, Id* id, const rdma_conn_param* param) {
  QPCM_DEBUG_LINE("rdma_accept id " + std::to_string(id->handle));
  CmCause cause;
  cause.param = param;
  return Transition(env, id, id->pub.ps == RDMA_PS_UDP ? CmInput::kAcceptUd : CmInput::kAccept,
                    cause);
}

int Reject(CmEnv& env, Id* id, const void* private_data, uint8_t length, uint16_t reason) {
  CmCause cause;
  cause.reject_data = private_data;
  cause.reject_length = length;
  cause.reject_reason = reason;
  return Transition(env, id, CmInput::kReject, cause);
}

int Disconnect(CmEnv& env, Id* id) {
  return Transition(env, id,
                    id->pub.ps == RDMA_PS_UDP ? CmInput::kDisconnectUd : CmInput::kDisconnect);
}

int Establish(CmEnv& env, Id* id) { return Transition(env, id, CmInput::kEstablish); }

void Forget(CmEnv& env, Id* id) { (void)Transition(env, id, CmInput::kDestroy); }

}  // namespace qpconnect::rdmacm
