// SPDX-License-Identifier: MIT
#include "cm_machine.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "cm_bases.h"
#include "ece.h"
#include "events.h"
#include "log.h"
#include "overdue.h"
#include "qpconnect/composer.h"
#include "sockaddr.h"

namespace qpconnect::rdmacm {
namespace {

using Clock = std::chrono::steady_clock;

bool IsUd(const Id* id) { return id->pub.ps == RDMA_PS_UDP; }

uint8_t ReqSpace(const Id* id) { return IsUd(id) ? kReqPrivateUdp : kReqPrivateTcp; }
uint8_t RepSpace(const Id* id) { return IsUd(id) ? kSidrRepPrivate : kRepPrivate; }

// The link's two ends as GIDs: both sides see the same two, so both make
// the same joint GID choice.
std::vector<Gid> LinkEnds(const Id* id) QPCM_REQUIRES(library_mutex) {
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

uint32_t RemoteQpn(const Id* id) QPCM_REQUIRES(library_mutex) {
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

void SendReject(Id* id, uint16_t reason, const std::string& text, std::string_view pdata = {})
    QPCM_REQUIRES(library_mutex) {
  if (!id->link) return;
  Message m = Base(MsgType::kRej, id);
  m.reason = reason;
  m.text = text;
  m.private_data.assign(pdata);
  id->link->Send(m);
}

void Post(Id* id, rdma_cm_event_type type, int status = 0) QPCM_REQUIRES(library_mutex) {
  EventSpec spec;
  spec.type = type;
  spec.status = status;
  PostEvent(id, spec);
}

// The id lets go of its link (the link lives on while another id or the
// engine holds it).
void Release(Id* id) QPCM_REQUIRES(library_mutex) { id->link.reset(); }

void ReportDisconnected(Id* id) QPCM_REQUIRES(library_mutex) {
  if (id->disconnect_reported) return;
  id->disconnect_reported = true;
  Post(id, RDMA_CM_EVENT_DISCONNECTED);
}

std::string Millis(std::chrono::milliseconds ms) { return std::to_string(ms.count()); }

// What an action comes to.
struct Step {
  enum class Kind : uint8_t {
    kDone,     // the row's next state is written
    kVerdict,  // `verdict` is the input now, from the same state
    kRefused,  // the call fails with `err`; nothing changes
  };
  Kind kind = Kind::kDone;
  CmInput verdict = CmInput::kBind;
  int err = 0;  // kDone: the call still fails with it, once the state is written
  Error error;  // kVerdict: why
};

Step Done(int err = 0) { return Step{Step::Kind::kDone, CmInput::kBind, err, {}}; }
Step Verdict(CmInput verdict, Error why) {
  return Step{Step::Kind::kVerdict, verdict, 0, std::move(why)};
}
Step Refused(int err, std::string_view why) {
  LogLine(why);
  return Step{Step::Kind::kRefused, CmInput::kBind, err, {}};
}

const Error& ErrorOf(const CmCause& cause) {
  static const Error kUnknown(ErrorCode::kInvalidArgument, 0, "", "", "no reason given");
  return cause.error != nullptr ? *cause.error : kUnknown;
}

int ErrnoOf(const Error& e) { return e.sys_errno != 0 ? e.sys_errno : EINVAL; }

// --- the failure ritual ---------------------------------------------------

// Every kFail* action: the QP to ERROR where due, the peer told (REJ), the
// link let go, the program told (an event, or the call's -1), as kCmFailures
// says; the row marks the id failed.
Step Fail(CmEnv& env, Id* id, CmAction action, const CmCause& cause) QPCM_REQUIRES(library_mutex) {
  const CmFailure& f = *FindCmFailure(action);
  if (action == CmAction::kFailProgramReject && cause.reject_length > kRejPrivate)
    return Refused(EINVAL, "rdma_reject: " + std::to_string(cause.reject_length) +
                               " bytes of private data, at most " + std::to_string(kRejPrivate));
  const Message* msg = cause.msg;
  if (f.program == CmTellProgram::kPeerRejected && msg != nullptr && !msg->text.empty())
    LogLine("rejected by " + (id->link ? id->link->peer_text() : "the peer") + ": " + msg->text);
  if (f.qp_to_error) env.qp.ToError(id);
  switch (f.peer) {
    case CmTellPeer::kNothing:
      break;
    case CmTellPeer::kValidatorRefused:
      SendReject(id, kRejectConsumer, "refused by the validator: " + ErrorOf(cause).detail);
      break;
    case CmTellPeer::kBadDescription:
      SendReject(id, kRejectConsumer, "your description does not decode");
      break;
    case CmTellPeer::kActiveQpRefused:
      SendReject(id, kRejectConsumer,
                 "the active side's QP was refused: " + ErrorOf(cause).operation);
      break;
    case CmTellPeer::kPassiveQpRefused:
      SendReject(id, kRejectConsumer,
                 "the passive side's QP was refused: " + ErrorOf(cause).operation);
      break;
    case CmTellPeer::kProgramRejects: {
      std::string_view pdata;
      if (cause.reject_data != nullptr)
        pdata = {static_cast<const char*>(cause.reject_data), cause.reject_length};
      SendReject(id, cause.reject_reason, "", pdata);
      break;
    }
  }
  Release(id);
  switch (f.program) {
    case CmTellProgram::kNothing:
      return Done();
    case CmTellProgram::kNoListener:
      if (IsUd(id))
        Post(id, RDMA_CM_EVENT_UNREACHABLE, kSidrUnsupported);
      else
        Post(id, RDMA_CM_EVENT_REJECTED, kRejectInvalidServiceId);
      return Done();
    case CmTellProgram::kPeerRejected: {
      EventSpec spec;
      spec.type = RDMA_CM_EVENT_REJECTED;
      uint16_t reason = msg != nullptr ? msg->reason : kRejectConsumer;
      spec.status = reason;
      if (IsUd(id)) {
        // A SIDR reply with a failure status: UNREACHABLE with that status.
        spec.type = RDMA_CM_EVENT_UNREACHABLE;
        spec.status = reason == kRejectInvalidServiceId ? kSidrUnsupported : kSidrReject;
      }
      if (msg != nullptr) {
        spec.private_data = msg->private_data;
        spec.private_space = msg->private_data.empty() ? 0 : kRejPrivate;
      }
      PostEvent(id, spec);
      return Done();
    }
    case CmTellProgram::kRejected:
      Post(id, RDMA_CM_EVENT_REJECTED, kRejectConsumer);
      return Done();
    case CmTellProgram::kTimedOut:
      Post(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
      return Done();
    case CmTellProgram::kProtocol:
      Post(id, RDMA_CM_EVENT_UNREACHABLE, -EPROTO);
      return Done();
    case CmTellProgram::kReset:
      Post(id, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET);
      return Done();
    case CmTellProgram::kConnectError:
      Post(id, RDMA_CM_EVENT_CONNECT_ERROR, -ErrnoOf(ErrorOf(cause)));
      return Done();
    case CmTellProgram::kCallFails:
      LogLine("rdma_accept: " + ErrorOf(cause).ToString());
      return Done(ErrnoOf(ErrorOf(cause)));
  }
  return Done();
}

// --- the actions ----------------------------------------------------------

// rdma_connect: this side described and encoded, the link dialed (or
// reused), the REQ queued, the reply's deadline started.
Step DialAndSendReq(CmEnv& env, Id* id, const CmCause& cause) QPCM_REQUIRES(library_mutex) {
  std::string_view pdata = PrivateData(cause.param);
  if (pdata.size() > ReqSpace(id))
    return Refused(EINVAL, "rdma_connect: " + std::to_string(pdata.size()) +
                               " bytes of private data, at most " + std::to_string(ReqSpace(id)));
  if (auto bad = ParamsFrom(cause.param, id, true, id->ours); !bad.empty())
    return Refused(EINVAL, "rdma_connect: " + bad);
  if (auto described = env.qp.Describe(id); !described)
    return Refused(EINVAL, "rdma_connect: " + described.error().ToString());
  QPCM_DEBUG_LINE("connect: described id " + std::to_string(id->handle));
  auto base = BaseOf(id);
  if (!base) return Refused(EINVAL, "rdma_connect: " + base.error().ToString());
  QPCM_DEBUG_LINE("connect: encoded id " + std::to_string(id->handle));
  Message req = Base(MsgType::kReq, id);
  req.dst = 0;
  req.params = id->ours;
  req.params.qp_num = id->local.qps[0].qpn;
  req.qkey = IsUd(id) ? RDMA_UDP_QKEY : 0;
  std::memcpy(&req.src_addr, &id->pub.route.addr.src_storage, sizeof req.src_addr);
  req.private_data.assign(pdata);
  if (!IsUd(id)) req.ece = OnWire(id->local_ece);
  id->link =
      env.host.Dial(&id->pub.route.addr.dst_addr, &id->pub.route.addr.src_addr, env.answer_timeout);
  PutBase(req, id, **base, *id->link);
  QPCM_DEBUG_LINE("connect: dialed id " + std::to_string(id->handle));
  id->connect_started = env.clock.Now();
  id->deadline = id->connect_started + env.answer_timeout;
  id->link->Send(req);
  QPCM_DEBUG_LINE("REQ queued for id " + std::to_string(id->handle));
  env.host.ArmSweep();
  return Done();
}

// A REQ on the new id cm.cc made for it: CONNECT_REQUEST for the listener's
// program; while it holds the request, the sweep says so (MRA) every
// MraPeriod().
Step PostConnectRequest(CmEnv& env, Id* id, const CmCause& cause) QPCM_REQUIRES(library_mutex) {
  EventSpec spec;
  spec.type = RDMA_CM_EVENT_CONNECT_REQUEST;
  spec.listen = cause.listener;
  if (cause.msg != nullptr) spec.private_data = cause.msg->private_data;
  spec.private_space = ReqSpace(id);
  if (IsUd(id)) {
    spec.ud = true;  // as a SIDR request's: no QPN or Q_Key (the reply tells the active side ours)
  } else {
    spec.conn = Swapped(id->theirs, RemoteQpn(id));
    if (cause.msg != nullptr) id->remote_ece = cause.msg->ece;  // rdma_get_remote_ece
  }
  PostEvent(id, spec);
  id->deadline = env.clock.Now() + MraPeriod(env);
  env.host.ArmSweep();
  return Done();
}

// A refused QpConnect: a GID changed since the agreement is the validator's
// kind of verdict (nothing was modified: REJECTED as for a refused pair);
// anything else the device's.
CmInput ConnectVerdict(const Error& e) {
  return IsGidChanged(e) ? CmInput::kValidatorRefused : CmInput::kDeviceRefused;
}

// rdma_accept: this side described, the pair validated, (RC) the QP to RTR
// and RTS, as librdmacm has it when rdma_accept returns (perftest posts
// sends right after it), the REP queued.
Step ValidateAndReply(CmEnv& env, Id* id, const CmCause& cause, bool ud)
    QPCM_REQUIRES(library_mutex) {
  std::string_view pdata = PrivateData(cause.param);
  if (pdata.size() > RepSpace(id))
    return Refused(EINVAL, "rdma_accept: " + std::to_string(pdata.size()) +
                               " bytes of private data, at most " + std::to_string(RepSpace(id)));
  if (auto bad = ParamsFrom(cause.param, id, false, id->ours); !bad.empty())
    return Refused(EINVAL, "rdma_accept: " + bad);
  if (auto described = env.qp.Describe(id); !described)
    return Refused(EINVAL, "rdma_accept: " + described.error().ToString());
  QPCM_DEBUG_LINE("accept: described id " + std::to_string(id->handle));
  if (auto ok = env.qp.PlanAndValidate(id, false, LinkEnds(id)); !ok)
    return Verdict(CmInput::kValidatorRefused, std::move(ok).error());
  QPCM_DEBUG_LINE("accept: validated id " + std::to_string(id->handle));
  auto base = BaseOf(id);
  if (!base) return Refused(EINVAL, "rdma_accept: " + base.error().ToString());
  QPCM_DEBUG_LINE("accept: encoded id " + std::to_string(id->handle));
  if (!ud) {
    auto moved = env.qp.Connect(id);
    QPCM_DEBUG_LINE("accept: rtr, rts id " + std::to_string(id->handle));
    if (!moved) {
      const CmInput verdict = ConnectVerdict(moved.error());  // before the error moves
      return Verdict(verdict, std::move(moved).error());
    }
  }
  QPCM_DEBUG_LINE("described, validated, RTR, RTS for id " + std::to_string(id->handle));
  Message rep = Base(MsgType::kRep, id);
  rep.params = id->ours;
  rep.params.qp_num = id->local.qps[0].qpn;
  rep.qkey = ud ? RDMA_UDP_QKEY : 0;
  rep.private_data.assign(pdata);
  if (!ud) rep.ece = OnWire(ReplyEce(id->local_ece, id->remote_ece));
  PutBase(rep, id, **base, *id->link);
  id->link->Send(rep);
  if (ud) {
    Release(id);  // SIDR: the REP ends it
  } else {
    id->connect_started = env.clock.Now();
    id->deadline = id->connect_started + env.answer_timeout;
    env.host.ArmSweep();
  }
  return Done();
}

// A REP: the peer's description rebuilt and the pair validated, then what
// `action` says: RC with its QP (RTR, RTS, RTU, ESTABLISHED), RC whose
// program moves its own QP (CONNECT_RESPONSE), UD (ESTABLISHED, param.ud).
Step TakeReply(CmEnv& env, Id* id, CmAction action, const CmCause& cause)
    QPCM_REQUIRES(library_mutex) {
  const Message& msg = *cause.msg;
  QPCM_DEBUG_LINE("REP for id " + std::to_string(id->handle));
  id->peer_handle = msg.src;
  id->theirs = msg.params;
  auto remote = PeerDescription(*id->link, msg, cause.decoded);
  if (!remote) {
    LogLine("the peer's reply does not decode: " + remote.error().ToString());
    return Verdict(CmInput::kBadDescription, std::move(remote).error());
  }
  id->remote = std::move(*remote);
  if (auto ok = env.qp.PlanAndValidate(id, true, LinkEnds(id)); !ok)
    return Verdict(CmInput::kValidatorRefused, std::move(ok).error());
  EventSpec spec;
  spec.private_data = msg.private_data;
  spec.private_space = RepSpace(id);
  if (action == CmAction::kValidatePostSidrEstablished) {
    spec.type = RDMA_CM_EVENT_ESTABLISHED;
    spec.ud = true;
    spec.ah = env.qp.PeerAh(id);
    spec.qp_num = RemoteQpn(id);
    spec.qkey = msg.qkey;
    Release(id);
    PostEvent(id, spec);
    return Done();
  }
  spec.conn = Swapped(msg.params, RemoteQpn(id));
  spec.conn.retry_count = 0;  // a REP carries none
  id->remote_ece = msg.ece;   // rdma_get_remote_ece
  if (action == CmAction::kValidatePostResponse) {
    spec.type = RDMA_CM_EVENT_CONNECT_RESPONSE;
    PostEvent(id, spec);
    return Done();
  }
  // The REP's ECE on the QP before RTR (ece.h); a REP naming another vendor
  // is refused as the device's refusals are (CONNECT_ERROR -EINVAL).
  auto ece = ReplyQpEce(id->local_ece, msg.ece);
  if (ece) {
    if (auto set = env.qp.SetEce(id, *ece); !set) ece = std::move(set).error();
  }
  if (!ece) {
    LogLine(ece.error().ToString());
    return Verdict(CmInput::kDeviceRefused, std::move(ece).error());
  }
  auto moved = env.qp.Connect(id);
  if (!moved) {
    LogLine(moved.error().ToString());
    const CmInput verdict = ConnectVerdict(moved.error());  // before the error moves
    return Verdict(verdict, std::move(moved).error());
  }
  QPCM_DEBUG_LINE("validated, RTR, RTS for id " + std::to_string(id->handle));
  id->link->Send(Base(MsgType::kRtu, id));
  spec.type = RDMA_CM_EVENT_ESTABLISHED;
  PostEvent(id, spec);
  return Done();
}

// An MRA: the peer's program holds our REQ; wait longer, up to rdma_cm's own
// bound for that case (its MRA asks for 2^24 x 4.096 us, CMA_CM_MRA_SETTING)
// or the answer timeout if that is longer. A peer whose whole process
// stopped sends no MRA and times out as before.
Step ExtendDeadline(CmEnv& env, Id* id) QPCM_REQUIRES(library_mutex) {
  auto bound = id->connect_started + std::max(env.answer_timeout, kMraBound);
  id->deadline = std::min(env.clock.Now() + env.answer_timeout, bound);
  id->acknowledged = true;
  return Done();
}

// The program holds a request: tell the peer it is alive (MRA, dst 0: every
// request of this link; one per link per sweep).
Step SendMra(CmEnv& env, Id* id, const CmCause& cause) QPCM_REQUIRES(library_mutex) {
  id->deadline = cause.now + MraPeriod(env);
  if (!id->link) return Done();
  if (cause.mra_sent != nullptr) {
    auto& sent = *cause.mra_sent;
    if (std::find(sent.begin(), sent.end(), id->link.get()) != sent.end()) return Done();
    sent.push_back(id->link.get());
  }
  Message mra;
  mra.type = MsgType::kMra;
  id->link->Send(mra);
  return Done();
}

Step Run(CmEnv& env, Id* id, const CmRow& row, const CmCause& cause) QPCM_REQUIRES(library_mutex) {
  switch (row.action) {
    case CmAction::kNothing:
      return Done();
    case CmAction::kLetGo:
      Release(id);
      return Done();
    case CmAction::kPostAddrResolved:
      Post(id, RDMA_CM_EVENT_ADDR_RESOLVED);
      return Done();
    case CmAction::kPostRouteResolved:
      Post(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
      return Done();
    case CmAction::kDialAndSendReq:
      return DialAndSendReq(env, id, cause);
    case CmAction::kPostConnectRequest:
      return PostConnectRequest(env, id, cause);
    case CmAction::kValidateMoveSendRep:
      return ValidateAndReply(env, id, cause, false);
    case CmAction::kValidateSendSidrRep:
      return ValidateAndReply(env, id, cause, true);
    case CmAction::kValidateMoveSendRtu:
    case CmAction::kValidatePostResponse:
    case CmAction::kValidatePostSidrEstablished:
      return TakeReply(env, id, row.action, cause);
    case CmAction::kSendRtu:
      if (id->link) id->link->Send(Base(MsgType::kRtu, id));
      return Done();
    case CmAction::kPostEstablished:
      Post(id, RDMA_CM_EVENT_ESTABLISHED);  // an RTU carries no parameters
      return Done();
    case CmAction::kExtendDeadline:
      return ExtendDeadline(env, id);
    case CmAction::kWaitOn:
      id->deadline = cause.heard + env.answer_timeout;  // when silence would end it
      return Done();
    case CmAction::kSendMra:
      return SendMra(env, id, cause);
    case CmAction::kSendDreq:
      env.qp.ToError(id);
      if (id->link) {
        id->link->Send(Base(MsgType::kDreq, id));
        id->deadline = env.clock.Now() + env.answer_timeout;
        env.host.ArmSweep();
      } else {
        ReportDisconnected(id);
      }
      return Done();
    case CmAction::kQpToError:
      env.qp.ToError(id);
      return Done();
    case CmAction::kPostDisconnectedOnDreq:
      id->dreq_received = true;
      ReportDisconnected(id);
      return Done();
    case CmAction::kSendDrepPostDisconnected:  // both sides disconnected at once
      if (id->link) id->link->Send(Base(MsgType::kDrep, id));
      ReportDisconnected(id);
      Release(id);
      return Done();
    case CmAction::kPostDisconnectedOnDrep:
      ReportDisconnected(id);
      Release(id);
      return Done();
    case CmAction::kPostDisconnected:
      ReportDisconnected(id);
      return Done();
    case CmAction::kGiveUpOnDrep:
      LogLine("no DREP from " + (id->link ? id->link->peer_text() : std::string("the peer")) +
              " within " + Millis(env.answer_timeout) + " ms: DISCONNECTED");
      Release(id);
      ReportDisconnected(id);
      return Done();
    case CmAction::kSendDrepIfAsked:
      env.qp.ToError(id);
      if (id->dreq_received && id->link) {
        id->link->Send(Base(MsgType::kDrep, id));
        Release(id);
      }
      return Done();
    case CmAction::kDestroySendDreq:
      if (id->link && !IsUd(id)) id->link->Send(Base(MsgType::kDreq, id));
      Release(id);
      return Done();
    case CmAction::kDestroyRejectRequest:
      SendReject(id, kRejectConsumer, "the passive side destroyed its id");
      Release(id);
      return Done();
    case CmAction::kDestroySendDrepIfAsked:
      // The peer's DREQ is answered even when the program destroys the id
      // without calling rdma_disconnect (the peer waits for this DREP).
      if (id->link && id->dreq_received) id->link->Send(Base(MsgType::kDrep, id));
      Release(id);
      return Done();
    case CmAction::kRefuseGone:
      return Refused(ECONNRESET, "rdma_accept: the peer went away before the accept");
    case CmAction::kFailNoListener:
    case CmAction::kFailTimedOut:
    case CmAction::kFailTimedOutQp:
    case CmAction::kFailProtocol:
    case CmAction::kFailReset:
    case CmAction::kFailResetQp:
    case CmAction::kFailQuietly:
    case CmAction::kFailPeerRejected:
    case CmAction::kFailBadReply:
    case CmAction::kFailValidator:
    case CmAction::kFailDeviceActive:
    case CmAction::kFailDevicePassive:
    case CmAction::kFailProgramReject:
      return Fail(env, id, row.action, cause);
  }
  return Done();
}

// What a call says when the id's state has no row for it.
struct CallWords {
  const char* call;
  const char* expected;  // appended to "the id is <state>"
};

CallWords WordsOf(CmInput call) {
  switch (call) {
    case CmInput::kBind:
      return {"rdma_bind_addr", ""};
    case CmInput::kResolveAddr:
      return {"rdma_resolve_addr", ""};
    case CmInput::kResolveRoute:
      return {"rdma_resolve_route", ", not address resolved"};
    case CmInput::kListen:
      return {"rdma_listen", ", not idle or bound"};
    case CmInput::kConnect:
      return {"rdma_connect", ", not route resolved"};
    case CmInput::kAccept:
    case CmInput::kAcceptUd:
      return {"rdma_accept", ", not a connection request"};
    case CmInput::kReject:
      return {"rdma_reject", ""};
    case CmInput::kDisconnect:
    case CmInput::kDisconnectUd:
      return {"rdma_disconnect", ", not connected"};
    case CmInput::kEstablish:
      return {"rdma_establish", ", not waiting for it"};
    default:
      return {"rdma_destroy_id", ""};
  }
}

}  // namespace

std::chrono::milliseconds MraPeriod(const CmEnv& env) {
  // The active side's timeout is its own (qp-cm --timeout), unknown here:
  // this period is short enough for any timeout above a second. One MRA per
  // link stands for every request held from that peer (a message per request
  // made a thousand held requests cost the engine, under the lock, more than
  // the accepts themselves), and none goes out when the program accepts
  // sooner.
  return std::min(env.answer_timeout / 2, std::chrono::milliseconds(500));
}

int CheckCall(const Id* id, CmInput call) {
  if (FindCmRow(id->state, call) != nullptr) return 0;
  CallWords w = WordsOf(call);
  LogLine(std::string(w.call) + ": the id is " + IdStateName(id->state) + w.expected);
  errno = EINVAL;
  return -1;
}

int Transition(CmEnv& env, Id* id, CmInput input, const CmCause& cause) {
  const CmRow* row = FindCmRow(id->state, input);
  if (row == nullptr) return IsCall(input) ? CheckCall(id, input) : 0;
  Step step = Run(env, id, *row, cause);
  switch (step.kind) {
    case Step::Kind::kVerdict: {
      CmCause why = cause;
      why.error = &step.error;
      return Transition(env, id, step.verdict, why);
    }
    case Step::Kind::kRefused:
      errno = step.err;
      return -1;
    case Step::Kind::kDone:
      break;
  }
  id->state = row->next;  // the only write of an id's state
  if (step.err != 0) {
    errno = step.err;
    return -1;
  }
  return 0;
}

}  // namespace qpconnect::rdmacm
