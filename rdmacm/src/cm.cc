#include "cm.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "address.h"
#include "devices.h"
#include "events.h"
#include "id_part.h"
#include "log.h"
#include "overdue.h"
#include "qp.h"
#include "qpconnect/composer.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/verbs/describe.h"

namespace qpconnect::rdmacm {
namespace {
// The link's two ends as GIDs: both sides see the same two, so both make
// the same joint GID choice.
std::vector<Gid> LinkEnds(const Id* id) {
  std::vector<Gid> ends;
  if (id->link == nullptr) return ends;
  for (const sockaddr_storage* a : {&id->link->local(), &id->link->remote()}) {
    ibv_gid g;
    if (!AddressGid(reinterpret_cast<const sockaddr*>(a), g)) continue;
    Gid gid;
    std::memcpy(gid.data(), g.raw, gid.size());
    ends.push_back(gid);
  }
  return ends;
}

using Clock = std::chrono::steady_clock;

bool IsUd(const Id* id) { return id->pub.ps == RDMA_PS_UDP; }

uint8_t ReqSpace(const Id* id) { return IsUd(id) ? kReqPrivateUdp : kReqPrivateTcp; }
uint8_t RepSpace(const Id* id) { return IsUd(id) ? kSidrRepPrivate : kRepPrivate; }

int Errno(int err, const std::string& why) {
  LogLine(why);
  errno = err;
  return -1;
}

// The parameters this side asks for, into `c`: the program's conn_param,
// checked against the device's limits as librdmacm checks them
// (RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH ask for the maximum); without one
// (a NULL conn_param) librdmacm's defaults: the device's maximum depths on
// the active side, the request's depths within the device's on the passive
// side, retry counts 7. Returns "" or which depth exceeds which limit.
std::string ParamsFrom(const rdma_conn_param* p, const Id* id, bool active, ConnParams& c) {
  c = ConnParams{};
  ibv_device_attr attr{};
  if (id->device != nullptr) attr = id->device->attr;
  if (p == nullptr) {
    int resp = active ? attr.max_qp_rd_atom
                      : std::min<int>(id->theirs.initiator_depth, attr.max_qp_rd_atom);
    int init = active ? attr.max_qp_init_rd_atom
                      : std::min<int>(id->theirs.responder_resources, attr.max_qp_init_rd_atom);
    c.responder_resources = static_cast<uint8_t>(std::clamp(resp, 0, 255));
    c.initiator_depth = static_cast<uint8_t>(std::clamp(init, 0, 255));
    return "";
  }
  if (id->device != nullptr) {
    if (p->responder_resources != RDMA_MAX_RESP_RES && p->responder_resources > attr.max_qp_rd_atom)
      return "responder_resources " + std::to_string(p->responder_resources) +
             " exceeds the device's max_qp_rd_atom " + std::to_string(attr.max_qp_rd_atom);
    if (p->initiator_depth != RDMA_MAX_INIT_DEPTH && p->initiator_depth > attr.max_qp_init_rd_atom)
      return "initiator_depth " + std::to_string(p->initiator_depth) +
             " exceeds the device's max_qp_init_rd_atom " +
             std::to_string(attr.max_qp_init_rd_atom);
  }
  c.responder_resources = p->responder_resources == RDMA_MAX_RESP_RES
                              ? static_cast<uint8_t>(std::min(attr.max_qp_rd_atom, 255))
                              : p->responder_resources;
  c.initiator_depth = p->initiator_depth == RDMA_MAX_INIT_DEPTH
                          ? static_cast<uint8_t>(std::min(attr.max_qp_init_rd_atom, 255))
                          : p->initiator_depth;
  c.flow_control = p->flow_control;
  c.retry_count = p->retry_count;
  c.rnr_retry_count = p->rnr_retry_count;
  c.srq = p->srq;
  c.qp_num = p->qp_num;
  return "";
}

std::string_view PrivateData(const rdma_conn_param* p) {
  if (p == nullptr || p->private_data == nullptr) return {};
  return {static_cast<const char*>(p->private_data), p->private_data_len};
}

// The parameters as the receiving side sees them: the peer's initiator depth
// is what this side must answer (its responder resources), and back.
ConnParams Swapped(const ConnParams& theirs, uint32_t qp_num) {
  ConnParams c = theirs;
  c.responder_resources = theirs.initiator_depth;
  c.initiator_depth = theirs.responder_resources;
  c.qp_num = qp_num;
  return c;
}

uint32_t RemoteQpn(const Id* id) {
  return id->remote && !id->remote->qps.empty() ? id->remote->qps[0].qpn : id->theirs.qp_num;
}

Message Base(MsgType type, const Id* id) {
  Message m;
  m.type = type;
  m.dst = id->peer_handle;
  m.src = id->handle;
  m.port_space = static_cast<uint16_t>(id->pub.ps);
  m.qp_type = static_cast<uint8_t>(id->pub.qp_type);
  return m;
}

void SendReject(Id* id, uint16_t reason, const std::string& text, std::string_view pdata = {}) {
  if (!id->link) return;
  Message m = Base(MsgType::kRej, id);
  m.reason = reason;
  m.text = text;
  m.private_data.assign(pdata);
  id->link->Send(m);
}

void Post(Id* id, rdma_cm_event_type type, int status = 0) {
  EventSpec spec;
  spec.type = type;
  spec.status = status;
  PostEvent(id, spec);
}

// Drops a link no id uses any more (the client side keeps it for reuse).
void Release(Id* id) { id->link.reset(); }

void ReportDisconnected(Id* id);

// How often a passive side whose program holds requests says so (MRA). The
// active side's timeout is its own (qp-cm --timeout), unknown here: this
// period is short enough for any timeout above a second. One MRA per link
// stands for every request held from that peer (a message per request made
// a thousand held requests cost the engine, under the lock, more than the
// accepts themselves), and none goes out when the program accepts sooner.
std::chrono::milliseconds MraPeriod() {
  return std::min(AnswerTimeout() / 2, std::chrono::milliseconds(500));
}

// The sweep: REQs and REPs unanswered past their deadline become UNREACHABLE,
// a DREQ unanswered becomes DISCONNECTED.
void Sweep();
void ArmSweep() {
  static boost::asio::steady_timer* timer = nullptr;
  static bool armed = false;
  if (armed) return;
  armed = true;
  boost::asio::post(EngineIo(), [] {
    if (timer == nullptr) timer = new boost::asio::steady_timer(EngineIo());
    timer->expires_after(std::chrono::milliseconds(200));
    timer->async_wait([](const boost::system::error_code&) {
      {
        auto lock = Lock();
        armed = false;
        Sweep();
      }
    });
  });
}

void Sweep() {
  auto now = Clock::now();
  bool waiting = false;
  std::vector<Link*> mra_sent;  // this sweep's MRAs: one per link
  ForEachId([&](Id* id) {
    if (id->state == IdState::kDisconnected && !id->disconnect_reported && id->link) {
      // A DREQ unanswered past its deadline: disconnected all the same.
      if (now < id->deadline) {
        waiting = true;
        return;
      }
      LogLine("no DREP from " + id->link->peer_text() + " within " +
              std::to_string(AnswerTimeout().count()) + " ms: DISCONNECTED");
      Release(id);
      return ReportDisconnected(id);
    }
    if (id->state == IdState::kRequest && id->link) {
      // The program holds a request: tell the peer it is alive (MRA).
      waiting = true;
      if (now < id->deadline) return;
      id->deadline = now + MraPeriod();
      if (std::find(mra_sent.begin(), mra_sent.end(), id->link.get()) != mra_sent.end()) return;
      Message mra;
      mra.type = MsgType::kMra;  // dst 0: every request of this link
      id->link->Send(mra);
      mra_sent.push_back(id->link.get());
      return;
    }
    if (id->state != IdState::kConnecting && id->state != IdState::kAccepted) return;
    if (now < id->deadline) {
      waiting = true;
      return;
    }
    // A REP or RTU late while the peer keeps sending waits on (overdue.h);
    // bytes of the peer's still unread here count as heard now.
    size_t unread = id->link ? id->link->Unread() : 0;
    auto heard = id->link ? (unread > 0 ? now : id->link->last_heard()) : Clock::time_point{};
    if (id->link && PeerStillTalking(now, id->connect_started, heard, AnswerTimeout())) {
      id->deadline = heard + AnswerTimeout();  // when silence would end it
      waiting = true;
      return;
    }
    if (id->acknowledged)
      LogLine("no reply from " + (id->link ? id->link->peer_text() : std::string("the peer")) +
              " within " +
              std::to_string(
                  std::chrono::duration_cast<std::chrono::milliseconds>(now - id->connect_started)
                      .count()) +
              " ms (its program received the request and never answered it): UNREACHABLE");
    else
      LogLine(std::string(id->state == IdState::kConnecting ? "no reply" : "no RTU") + " from " +
              (id->link ? id->link->peer_text() : std::string("the peer")) + " within " +
              std::to_string(AnswerTimeout().count()) + " ms" +
              (id->link && heard != Clock::time_point{}
                   ? " (nothing heard from it for " +
                         std::to_string(
                             std::chrono::duration_cast<std::chrono::milliseconds>(now - heard)
                                 .count()) +
                         " ms)"
                   : std::string()) +
              ": UNREACHABLE");
    if (id->state == IdState::kAccepted) QpToError(id);
    id->state = IdState::kFailed;
    Release(id);
    Post(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
  });
  if (waiting) ArmSweep();
}

// The base of this side's description (id_part.h): its number and bytes,
// encoded once per described device port.
struct WireBase {
  uint32_t number = 0;
  std::string bytes;
};

Result<const WireBase*> BaseOf(const Id* id) {
  static std::map<const verbs::LocalDescription*, WireBase> bases;  // under Lock()
  static uint32_t next = 1;
  if (id->described == nullptr)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "describe", "", "the id is not described");
  if (auto it = bases.find(id->described); it != bases.end()) return &it->second;
  EndpointInfo base = id->described->endpoint;
  ApplyIdPart(base, IdPart{});  // a placeholder QP: each REQ/REP carries its own
  QPC_TRY(oob::CheckWireRanges(base));
  auto [pos, inserted] = bases.emplace(id->described, WireBase{next++, oob::EncodeBinary(base)});
  return &pos->second;
}

// Names this side's base in `msg` (with its bytes, the first time `link`
// carries it) and the id's PSN.
void PutBase(Message& msg, const Id* id, const WireBase& base, Link& link) {
  msg.base = base.number;
  msg.psn = id->psn & kPsnMask;
  if (link.bases_sent.insert(base.number).second) msg.endpoint = base.bytes;
}

// The peer's description from a REQ or REP: its base (decoded by the engine
// when the message brought one, else one the link brought before) with the
// message's per-id part.
Result<EndpointInfo> PeerDescription(Link& link, const Message& msg,
                                     std::optional<Result<EndpointInfo>>& decoded) {
  if (decoded) {
    if (!*decoded) return std::move(*decoded).error();
    if (link.peer_bases.size() >= Link::kMaxBases && link.peer_bases.count(msg.base) == 0)
      return Error(
          ErrorCode::kProtocol, 0, "read description", "base",
          "more than " + std::to_string(Link::kMaxBases) + " description bases on one link");
    link.peer_bases[msg.base] = std::move(**decoded);
  }
  auto it = link.peer_bases.find(msg.base);
  if (it == link.peer_bases.end())
    return Error(ErrorCode::kProtocol, 0, "read description", "base",
                 "base " + std::to_string(msg.base) + " was never sent on this link");
  auto part = IdPartOf(msg);
  if (!part) return std::move(part).error();
  EndpointInfo remote = it->second;
  ApplyIdPart(remote, *part);
  return remote;
}

// --- messages -------------------------------------------------------------

// The id listening where `local` was reached: the same port, and the same
// address or a wildcard one.
Id* FindListener(const sockaddr_storage& local) {
  const auto* addr = reinterpret_cast<const sockaddr*>(&local);
  Id* found = nullptr;
  ForEachId([&](Id* id) {
    if (id->state != IdState::kListening || !id->listener) return;
    if (id->listener->port() != PortOf(addr)) return;
    const sockaddr* bound = &id->pub.route.addr.src_addr;
    if (IsWildcard(bound)) {
      if (found == nullptr) found = id;
      return;
    }
    bool same =
        bound->sa_family == addr->sa_family &&
        (addr->sa_family == AF_INET
             ? std::memcmp(&reinterpret_cast<const sockaddr_in*>(bound)->sin_addr,
                           &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, 4) == 0
             : std::memcmp(&reinterpret_cast<const sockaddr_in6*>(bound)->sin6_addr,
                           &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16) == 0);
    if (same) found = id;  // a specific address wins over a wildcard
  });
  return found;
}

void RefuseRequest(Link& link, const Message& msg, uint16_t reason, const std::string& why) {
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

// A request on its way to the listener of its link's address (the rest of
// OnRequest): refused if there is none.
void DispatchRequest(const std::shared_ptr<Link>& link, const Message& msg,
                     std::optional<Result<EndpointInfo>>& decoded);

// The parked requests of `link` (Link::parked), in order: while no id
// listens, they wait (polled every kRelistenPoll); then each goes on, or,
// its grace over, is refused.
void DrainParked(const std::shared_ptr<Link>& link) {
  while (!link->parked.empty() && !link->failed()) {
    if (FindListener(link->local()) == nullptr &&
        Clock::now() - link->parked.front().since < kRelistenGrace) {
      auto timer = std::make_shared<boost::asio::steady_timer>(EngineIo(), kRelistenPoll);
      timer->async_wait([link, timer](const boost::system::error_code&) {
        auto lock = Lock();
        DrainParked(link);
      });
      return;
    }
    Link::ParkedRequest parked = std::move(link->parked.front());
    link->parked.pop_front();
    DispatchRequest(link, parked.msg, parked.decoded);
  }
  link->parked.clear();
}

void OnRequest(const std::shared_ptr<Link>& link, const Message& msg,
               std::optional<Result<EndpointInfo>>& decoded) {
  QPCM_DEBUG_LINE("REQ from " + link->peer_text());
  if (!link->parked.empty()) {  // behind the parked ones, in order
    link->parked.push_back({msg, std::move(decoded), Clock::now()});
    return;
  }
  if (FindListener(link->local()) == nullptr) {
    link->parked.push_back({msg, std::move(decoded), Clock::now()});
    return DrainParked(link);
  }
  DispatchRequest(link, msg, decoded);
}

void DispatchRequest(const std::shared_ptr<Link>& link, const Message& msg,
                     std::optional<Result<EndpointInfo>>& decoded) {
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
  auto remote = PeerDescription(*link, msg, decoded);
  if (!remote)
    return refuse(kRejectConsumer, "its description does not decode: " + remote.error().ToString());
  // Where the client reached this process decides the device.
  if (!link->placement && !link->placement_error) {
    if (listener->device != nullptr) {
      Placement p;
      p.device = listener->device;
      p.port = listener->pub.port_num;
      if (listener->gid_index != kAutoGid) p.gid_index = listener->gid_index;
      p.how = listener->mapping;
      link->placement = p;
    } else if (auto placed = PlaceAddress(reinterpret_cast<const sockaddr*>(&link->local()))) {
      link->placement = *placed;
    } else {
      link->placement_error = placed.error();
    }
  }
  if (link->placement_error) return refuse(kRejectInvalidServiceId, link->placement_error->detail);

  auto* id = new Id{};
  id->magic = kIdMagic;
  RegisterId(id);
  id->pub.channel = listener->pub.channel;
  id->pub.context = listener->pub.context;
  id->pub.ps = listener->pub.ps;
  id->pub.qp_type = listener->pub.qp_type;
  id->device = link->placement->device;
  id->pub.verbs = id->device->ctx;
  id->pub.port_num = link->placement->port;
  id->gid_index = link->placement->gid_index.value_or(kAutoGid);
  id->mapping = link->placement->how;
  std::memcpy(&id->pub.route.addr.src_storage, &link->local(), sizeof(sockaddr_storage));
  std::memcpy(&id->pub.route.addr.dst_storage, &msg.src_addr, sizeof(sockaddr_storage));
  id->ep_qp_attr = listener->ep_qp_attr;
  id->link = link;
  id->peer_handle = msg.src;
  id->theirs = msg.params;
  id->remote = std::move(*remote);
  id->state = IdState::kRequest;

  EventSpec spec;
  spec.type = RDMA_CM_EVENT_CONNECT_REQUEST;
  spec.listen = listener;
  spec.private_data = msg.private_data;
  spec.private_space = ReqSpace(id);
  if (IsUd(id)) {
    spec.ud = true;  // as a SIDR request's: no QPN or Q_Key (the reply tells the active side ours)
  } else {
    spec.conn = Swapped(msg.params, RemoteQpn(id));
  }
  PostEvent(id, spec);
  // While the program holds the request, the sweep tells the active side
  // that it is alive (MRA) every MraPeriod().
  id->deadline = Clock::now() + MraPeriod();
  ArmSweep();
}

// The active side's REQ reached a program that has not answered yet: wait
// longer, up to rdma_cm's own bound for that case (its MRA asks for 2^24 x
// 4.096 us, CMA_CM_MRA_SETTING) or the answer timeout if that is longer.
// A peer whose whole process stopped sends no MRA and times out as before.
void OnReceiptAck(Id* id) {  // for each kConnecting id of the MRA's link
  if (id->state != IdState::kConnecting) return;
  auto bound = id->connect_started + std::max(AnswerTimeout(), kMraBound);
  id->deadline = std::min(Clock::now() + AnswerTimeout(), bound);
  id->acknowledged = true;
}

void OnReply(Id* id, const Message& msg, std::optional<Result<EndpointInfo>>& decoded) {
  if (id->state != IdState::kConnecting) return;
  QPCM_DEBUG_LINE("REP for id " + std::to_string(id->handle));
  id->peer_handle = msg.src;
  id->theirs = msg.params;
  auto remote = PeerDescription(*id->link, msg, decoded);
  if (!remote) {
    LogLine("the peer's reply does not decode: " + remote.error().ToString());
    SendReject(id, kRejectConsumer, "your description does not decode");
    id->state = IdState::kFailed;
    Release(id);
    return Post(id, RDMA_CM_EVENT_UNREACHABLE, -EPROTO);
  }
  id->remote = std::move(*remote);
  if (auto ok = PlanAndValidate(id, true, LinkEnds(id)); !ok) {
    SendReject(id, kRejectConsumer, "refused by the validator: " + ok.error().detail);
    id->state = IdState::kFailed;
    Release(id);
    return Post(id, RDMA_CM_EVENT_REJECTED, kRejectConsumer);
  }
  EventSpec spec;
  spec.private_data = msg.private_data;
  spec.private_space = RepSpace(id);
  if (IsUd(id)) {
    id->state = IdState::kEstablished;
    spec.type = RDMA_CM_EVENT_ESTABLISHED;
    spec.ud = true;
    spec.ah = PeerAh(id);
    spec.qp_num = RemoteQpn(id);
    spec.qkey = msg.qkey;
    Release(id);
    return PostEvent(id, spec);
  }
  spec.conn = Swapped(msg.params, RemoteQpn(id));
  spec.conn.retry_count = 0;  // a REP carries none
  if (id->pub.qp == nullptr) {
    id->state = IdState::kResponse;
    spec.type = RDMA_CM_EVENT_CONNECT_RESPONSE;
    return PostEvent(id, spec);
  }
  auto moved = QpConnect(id);
  if (!moved && IsGidChanged(moved.error())) {
    SendReject(id, kRejectConsumer, "refused by the validator: " + moved.error().detail);
    id->state = IdState::kFailed;
    Release(id);
    return Post(id, RDMA_CM_EVENT_REJECTED, kRejectConsumer);
  }
  if (!moved) {
    LogLine(moved.error().ToString());
    QpToError(id);
    SendReject(id, kRejectConsumer, "the active side's QP was refused: " + moved.error().operation);
    id->state = IdState::kFailed;
    Release(id);
    return Post(id, RDMA_CM_EVENT_CONNECT_ERROR,
                -(moved.error().sys_errno ? moved.error().sys_errno : EINVAL));
  }
  QPCM_DEBUG_LINE("validated, RTR, RTS for id " + std::to_string(id->handle));
  Message rtu = Base(MsgType::kRtu, id);
  id->link->Send(rtu);
  id->state = IdState::kEstablished;
  spec.type = RDMA_CM_EVENT_ESTABLISHED;
  PostEvent(id, spec);
}

void OnReject(Id* id, const Message& msg) {
  if (id->state != IdState::kConnecting && id->state != IdState::kAccepted &&
      id->state != IdState::kRequest && id->state != IdState::kResponse)
    return;
  if (!msg.text.empty())
    LogLine("rejected by " + (id->link ? id->link->peer_text() : "the peer") + ": " + msg.text);
  QpToError(id);  // as librdmacm on REJECTED
  id->state = IdState::kFailed;
  Release(id);
  EventSpec spec;
  spec.type = RDMA_CM_EVENT_REJECTED;
  spec.status = msg.reason;
  if (IsUd(id)) {
    // A SIDR reply with a failure status: UNREACHABLE with that status.
    spec.type = RDMA_CM_EVENT_UNREACHABLE;
    spec.status = msg.reason == kRejectInvalidServiceId ? kSidrUnsupported : kSidrReject;
  }
  spec.private_data = msg.private_data;
  spec.private_space = msg.private_data.empty() ? 0 : kRejPrivate;
  PostEvent(id, spec);
}

void OnReadyToUse(Id* id) {
  if (id->state != IdState::kAccepted) return;
  id->state = IdState::kEstablished;
  Post(id, RDMA_CM_EVENT_ESTABLISHED);  // an RTU carries no parameters
}

void ReportDisconnected(Id* id) {
  if (id->disconnect_reported) return;
  id->disconnect_reported = true;
  Post(id, RDMA_CM_EVENT_DISCONNECTED);
}

void OnDisconnectRequest(Id* id) {
  switch (id->state) {
    case IdState::kEstablished:
    case IdState::kAccepted:
    case IdState::kResponse:
      id->dreq_received = true;
      id->state = IdState::kDisconnected;
      ReportDisconnected(id);
      break;
    case IdState::kDisconnected:  // both sides disconnected at once
      if (id->link) id->link->Send(Base(MsgType::kDrep, id));
      ReportDisconnected(id);
      Release(id);
      break;
    default:
      break;
  }
}

}  // namespace

std::chrono::milliseconds AnswerTimeout() {
  static const std::chrono::milliseconds timeout = [] {
    const char* env = std::getenv("QPCM_TIMEOUT_MS");
    long v = env != nullptr ? std::strtol(env, nullptr, 10) : 0;
    return std::chrono::milliseconds(v > 0 ? v : 10000);
  }();
  return timeout;
}

void OnMessage(const std::shared_ptr<Link>& link, const Message& msg) {
  // A base's bytes decode before the lock: the program's threads need not
  // wait for it.
  std::optional<Result<EndpointInfo>> decoded;
  if ((msg.type == MsgType::kReq || msg.type == MsgType::kRep) && !msg.endpoint.empty())
    decoded = oob::DecodeBinary(msg.endpoint);
  auto lock = Lock();
  if (msg.type == MsgType::kReq) {
    if (link->client()) return;  // only a listener's links take requests
    return OnRequest(link, msg, decoded);
  }
  if (msg.type == MsgType::kMra) {  // the peer holds the requests it has of ours
    ForEachId([&](Id* id) {
      if (id->link == link) OnReceiptAck(id);
    });
    return;
  }
  Id* id = FindId(msg.dst);
  if (id == nullptr || id->link != link) {
    // The id was destroyed meanwhile; a REQ's sender may wait for an answer.
    if (msg.type == MsgType::kDreq) {
      Message drep;
      drep.type = MsgType::kDrep;
      drep.dst = msg.src;
      link->Send(drep);
    }
    return;
  }
  switch (msg.type) {
    case MsgType::kRep:
      return OnReply(id, msg, decoded);
    case MsgType::kRej:
      return OnReject(id, msg);
    case MsgType::kRtu:
      return OnReadyToUse(id);
    case MsgType::kDreq:
      if (id->state == IdState::kDisconnected || id->state == IdState::kEstablished ||
          id->state == IdState::kAccepted || id->state == IdState::kResponse)
        return OnDisconnectRequest(id);
      return;
    case MsgType::kDrep:
      ReportDisconnected(id);
      Release(id);
      return;
    default:
      return;
  }
}

void OnLinkDown(const std::shared_ptr<Link>& link, const LinkFailure& failure) {
  auto lock = Lock();
  bool logged = false;
  ForEachId([&](Id* id) {
    if (id->link != link) return;
    if (!logged && failure.kind != LinkFailure::kProtocol) {  // Link::Fail logged those
      LogLine(failure.text + " [" + id->mapping + "]");
      logged = true;
    }
    switch (id->state) {
      case IdState::kConnecting:
        id->state = IdState::kFailed;
        if (failure.kind == LinkFailure::kRefused && IsUd(id))
          Post(id, RDMA_CM_EVENT_UNREACHABLE, kSidrUnsupported);
        else if (failure.kind == LinkFailure::kRefused)
          Post(id, RDMA_CM_EVENT_REJECTED, kRejectInvalidServiceId);
        else
          Post(id, RDMA_CM_EVENT_UNREACHABLE,
               failure.kind == LinkFailure::kTimeout    ? -ETIMEDOUT
               : failure.kind == LinkFailure::kProtocol ? -EPROTO
                                                        : -ECONNRESET);
        break;
      case IdState::kAccepted:
        QpToError(id);
        id->state = IdState::kFailed;
        Post(id, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET);
        break;
      case IdState::kRequest:
        id->state = IdState::kFailed;  // rdma_accept will say so
        break;
      case IdState::kResponse:
      case IdState::kEstablished:
      case IdState::kDisconnected:
        if (!IsUd(id)) {
          id->state = IdState::kDisconnected;
          ReportDisconnected(id);
        }
        break;
      default:
        break;
    }
    id->link.reset();
  });
}

int Connect(Id* id, const rdma_conn_param* param) {
  QPCM_DEBUG_LINE("rdma_connect id " + std::to_string(id->handle));
  if (id->state != IdState::kRouteResolved && id->state != IdState::kAddrResolved)
    return Errno(EINVAL, std::string("rdma_connect: the id is ") + IdStateName(id->state) +
                             ", not route resolved");
  std::string_view pdata = PrivateData(param);
  if (pdata.size() > ReqSpace(id))
    return Errno(EINVAL, "rdma_connect: " + std::to_string(pdata.size()) +
                             " bytes of private data, at most " + std::to_string(ReqSpace(id)));
  if (auto bad = ParamsFrom(param, id, true, id->ours); !bad.empty())
    return Errno(EINVAL, "rdma_connect: " + bad);
  if (auto described = DescribeSide(id); !described)
    return Errno(EINVAL, "rdma_connect: " + described.error().ToString());
  QPCM_DEBUG_LINE("connect: described id " + std::to_string(id->handle));
  auto base = BaseOf(id);
  if (!base) return Errno(EINVAL, "rdma_connect: " + base.error().ToString());
  QPCM_DEBUG_LINE("connect: encoded id " + std::to_string(id->handle));
  Message req = Base(MsgType::kReq, id);
  req.dst = 0;
  req.params = id->ours;
  req.params.qp_num = id->local.qps[0].qpn;
  req.qkey = IsUd(id) ? RDMA_UDP_QKEY : 0;
  std::memcpy(&req.src_addr, &id->pub.route.addr.src_storage, sizeof req.src_addr);
  req.private_data.assign(pdata);
  id->link =
      Link::Dial(&id->pub.route.addr.dst_addr, &id->pub.route.addr.src_addr, AnswerTimeout());
  PutBase(req, id, **base, *id->link);
  QPCM_DEBUG_LINE("connect: dialed id " + std::to_string(id->handle));
  id->state = IdState::kConnecting;
  id->connect_started = Clock::now();
  id->deadline = id->connect_started + AnswerTimeout();
  id->link->Send(req);
  QPCM_DEBUG_LINE("REQ queued for id " + std::to_string(id->handle));
  ArmSweep();
  return 0;
}

int Accept(Id* id, const rdma_conn_param* param) {
  QPCM_DEBUG_LINE("rdma_accept id " + std::to_string(id->handle));
  if (id->state != IdState::kRequest) {
    if (id->state == IdState::kFailed)
      return Errno(ECONNRESET, "rdma_accept: the peer went away before the accept");
    return Errno(EINVAL, std::string("rdma_accept: the id is ") + IdStateName(id->state) +
                             ", not a connection request");
  }
  std::string_view pdata = PrivateData(param);
  if (pdata.size() > RepSpace(id))
    return Errno(EINVAL, "rdma_accept: " + std::to_string(pdata.size()) +
                             " bytes of private data, at most " + std::to_string(RepSpace(id)));
  if (auto bad = ParamsFrom(param, id, false, id->ours); !bad.empty())
    return Errno(EINVAL, "rdma_accept: " + bad);
  if (auto described = DescribeSide(id); !described)
    return Errno(EINVAL, "rdma_accept: " + described.error().ToString());
  QPCM_DEBUG_LINE("accept: described id " + std::to_string(id->handle));
  if (auto ok = PlanAndValidate(id, false, LinkEnds(id)); !ok) {
    SendReject(id, kRejectConsumer, "refused by the validator: " + ok.error().detail);
    id->state = IdState::kFailed;
    Release(id);
    Post(id, RDMA_CM_EVENT_REJECTED, kRejectConsumer);
    return 0;
  }
  QPCM_DEBUG_LINE("accept: validated id " + std::to_string(id->handle));
  auto base = BaseOf(id);
  if (!base) return Errno(EINVAL, "rdma_accept: " + base.error().ToString());
  QPCM_DEBUG_LINE("accept: encoded id " + std::to_string(id->handle));
  if (!IsUd(id)) {
    // As librdmacm: the passive QP is at RTS when rdma_accept returns
    // (perftest posts sends right after it).
    auto moved = QpConnect(id);
    QPCM_DEBUG_LINE("accept: rtr, rts id " + std::to_string(id->handle));
    if (!moved && IsGidChanged(moved.error())) {
      SendReject(id, kRejectConsumer, "refused by the validator: " + moved.error().detail);
      id->state = IdState::kFailed;
      Release(id);
      Post(id, RDMA_CM_EVENT_REJECTED, kRejectConsumer);
      return 0;
    }
    if (!moved) {
      QpToError(id);
      SendReject(id, kRejectConsumer,
                 "the passive side's QP was refused: " + moved.error().operation);
      id->state = IdState::kFailed;
      Release(id);
      return Errno(moved.error().sys_errno ? moved.error().sys_errno : EINVAL,
                   "rdma_accept: " + moved.error().ToString());
    }
  }
  QPCM_DEBUG_LINE("described, validated, RTR, RTS for id " + std::to_string(id->handle));
  Message rep = Base(MsgType::kRep, id);
  rep.params = id->ours;
  rep.params.qp_num = id->local.qps[0].qpn;
  rep.qkey = IsUd(id) ? RDMA_UDP_QKEY : 0;
  rep.private_data.assign(pdata);
  PutBase(rep, id, **base, *id->link);
  id->link->Send(rep);
  if (IsUd(id)) {
    id->state = IdState::kEstablished;
    Release(id);
  } else {
    id->state = IdState::kAccepted;
    id->connect_started = Clock::now();
    id->deadline = id->connect_started + AnswerTimeout();
    ArmSweep();
  }
  return 0;
}

int Reject(Id* id, const void* private_data, uint8_t length) {
  if (id->state != IdState::kRequest && id->state != IdState::kResponse)
    return Errno(EINVAL, std::string("rdma_reject: the id is ") + IdStateName(id->state));
  if (length > kRejPrivate)
    return Errno(EINVAL, "rdma_reject: " + std::to_string(length) +
                             " bytes of private data, at most " + std::to_string(kRejPrivate));
  std::string_view pdata;
  if (private_data != nullptr) pdata = {static_cast<const char*>(private_data), length};
  SendReject(id, kRejectConsumer, "", pdata);
  id->state = IdState::kFailed;
  Release(id);
  return 0;
}

int Disconnect(Id* id) {
  switch (id->state) {
    case IdState::kEstablished:
    case IdState::kAccepted:
    case IdState::kResponse:
      QpToError(id);
      if (IsUd(id)) return 0;
      id->state = IdState::kDisconnected;
      if (id->link) {
        id->link->Send(Base(MsgType::kDreq, id));
        id->deadline = Clock::now() + AnswerTimeout();
        ArmSweep();
      } else {
        ReportDisconnected(id);
      }
      return 0;
    case IdState::kDisconnected:
      QpToError(id);
      if (id->dreq_received && id->link) {
        id->link->Send(Base(MsgType::kDrep, id));
        Release(id);
      }
      return 0;
    default:
      return Errno(EINVAL, std::string("rdma_disconnect: the id is ") + IdStateName(id->state) +
                               ", not connected");
  }
}

int Establish(Id* id) {
  if (id->state != IdState::kResponse)
    return Errno(EINVAL, std::string("rdma_establish: the id is ") + IdStateName(id->state) +
                             ", not waiting for it");
  if (id->link) id->link->Send(Base(MsgType::kRtu, id));
  id->state = IdState::kEstablished;
  return 0;
}

void Forget(Id* id) {
  if (id->link) {
    switch (id->state) {
      case IdState::kEstablished:
      case IdState::kAccepted:
      case IdState::kResponse:
        if (!IsUd(id)) id->link->Send(Base(MsgType::kDreq, id));
        break;
      case IdState::kRequest:
        SendReject(id, kRejectConsumer, "the passive side destroyed its id");
        break;
      case IdState::kDisconnected:
        // The peer's DREQ is answered even when the program destroys the id
        // without calling rdma_disconnect (the peer waits for this DREP).
        if (id->dreq_received) id->link->Send(Base(MsgType::kDrep, id));
        break;
      default:
        break;
    }
  }
  id->link.reset();
}

}  // namespace qpconnect::rdmacm
