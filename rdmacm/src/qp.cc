// SPDX-License-Identifier: MIT
#include "qp.h"

#include <cerrno>
#include <vector>

#include "devices.h"
#include "ece.h"
#include "id_part.h"
#include "log.h"
#include "multicast.h"
#include "path_cache.h"
#include "qpconnect/composer.h"
#include "qpconnect/diagnostic.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/resources.h"

namespace qpconnect::rdmacm {
namespace {

constexpr unsigned kRcAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

Transport TransportOf(const Id* id) {
  return id->pub.qp_type == IBV_QPT_UD ? Transport::kUd : Transport::kRc;
}

int Fail(const Id* id, const Error& e) {
  LogLine(e.ToString() + (id->mapping.empty() ? "" : " [" + id->mapping + "]"));
  errno = e.sys_errno != 0 ? e.sys_errno : EINVAL;
  return -1;
}

QpAttrs InitAttrs(const Id* id) {
  QpAttrs a;
  a.port_num = id->pub.port_num;
  a.pkey_index = 0;
  a.qkey = RDMA_UDP_QKEY;
  a.sq_psn = id->psn;
  return a;
}

// The provider's ECE for `qp` (ibv_query_ece): none where it has none.
Result<Ece> QueryEce(ibv_qp* qp) {
  ibv_ece ece{};
  if (int rc = ibv_query_ece(qp, &ece); rc != 0 && rc != EOPNOTSUPP)
    return Error(ErrorCode::kVerbs, rc, "ibv_query_ece");
  return Ece{ece.vendor_id, ece.options};
}

Result<void> SetEce(ibv_qp* qp, const Ece& e) {
  ibv_ece ece{};
  ece.vendor_id = e.vendor_id;
  ece.options = e.options;
  if (int rc = ibv_set_ece(qp, &ece); rc != 0 && rc != EOPNOTSUPP)
    return Error(
        ErrorCode::kVerbs, rc, "ibv_set_ece", "",
        "vendor_id " + std::to_string(e.vendor_id) + " options " + std::to_string(e.options));
  return {};
}

// A new QP's ECE, as librdmacm's rdma_create_qp has it (ece.h): this side's
// is the provider's; a QP for a received request is set to the request's.
Result<void> InitEce(Id* id) QPCM_REQUIRES(library_mutex) {
  auto provider = QueryEce(id->pub.qp);
  if (!provider) return std::move(provider).error();
  id->local_ece = *provider;
  EceToSet to = RequestQpEce(*provider, id->remote_ece);
  if (to.set) return SetEce(id->pub.qp, to.ece);
  return {};
}

// After the first moves, a QP set from a request: the options the provider
// kept are this side's (they go in the REP).
Result<void> SettleEce(Id* id) QPCM_REQUIRES(library_mutex) {
  if (id->remote_ece.vendor_id == 0) return {};
  auto now = QueryEce(id->pub.qp);
  if (!now) return std::move(now).error();
  id->local_ece.options = now->options;
  return {};
}

// The id's QP as the transition path moves it.
verbs::VerbsQpControl ControlOf(Id* id) { return verbs::VerbsQpControl(*id->pub.qp); }

// After the QP exists: INIT (RC) or INIT, RTR, RTS (UD).
Result<void> FirstMoves(Id* id) {
  verbs::VerbsQpControl control = ControlOf(id);
  Transport t = TransportOf(id);
  QpAttrs a = InitAttrs(id);
  QPC_TRY(verbs::MoveToInit(control, t, a, t == Transport::kUd ? 0u : kRcAccess));
  if (t == Transport::kUd) QPC_TRY(verbs::MoveToRts(control, t, a));
  return {};
}

int CheckReady(Id* id) {
  if (id->device == nullptr || id->pub.verbs == nullptr) {
    LogLine("rdma_create_qp: the id has no device yet (resolve or bind an address first)");
    errno = EINVAL;
    return -1;
  }
  if (id->pub.qp != nullptr) {
    LogLine("rdma_create_qp: the id already has a QP");
    errno = EINVAL;
    return -1;
  }
  if (id->psn == 0) id->psn = verbs::RandomPsn();
  return 0;
}

// The CQs librdmacm makes when the attributes name none: a completion
// channel and a CQ each for receives and sends, sized by the queue depths,
// the id as the CQs' context. Into `owned`; `send_cq`/`recv_cq` point at them.
Result<void> MakeCqs(Id* id, QpResources& owned, ibv_cq*& send_cq, ibv_cq*& recv_cq,
                     uint32_t send_wr, uint32_t recv_wr) {
  ibv_context& ctx = *id->pub.verbs;
  auto make = [&](verbs::UniqueCompChannel& channel, verbs::UniqueCq& cq,
                  uint32_t depth) -> Result<void> {
    auto ch = verbs::CreateCompChannel(ctx);
    if (!ch) return std::move(ch).error();
    channel = std::move(*ch);
    auto made = verbs::CreateCq(ctx, static_cast<int>(depth ? depth : 1), channel.get(), id);
    if (!made) return std::move(made).error();
    cq = std::move(*made);
    return {};
  };
  if (recv_cq == nullptr) {
    QPC_TRY(make(owned.recv_channel, owned.recv_cq, recv_wr));
    recv_cq = owned.recv_cq.get();
  }
  if (send_cq == nullptr) {
    QPC_TRY(make(owned.send_channel, owned.send_cq, send_wr));
    send_cq = owned.send_cq.get();
  }
  return {};
}

Result<ibv_pd*> PdFor(Id* id, ibv_pd* pd) QPCM_REQUIRES(library_mutex) {
  if (pd == nullptr) return DefaultPd(*id->device);
  if (pd->context != id->pub.verbs)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "rdma_create_qp", "pd",
                 "the PD belongs to another device than the id's (" + id->device->name + ")");
  return pd;
}

// The QP made (or not) by `made`, with the CQs in `owned`: moved to its first
// states, then handed to the id (id->pub's pointers, the owners in
// id->qp_owned). On any failure everything made is freed by the owners.
int Finish(Id* id, std::unique_ptr<QpResources> owned, Result<verbs::UniqueQp> made, ibv_pd* pd)
    QPCM_REQUIRES(library_mutex) {
  if (!made) return Fail(id, made.error());
  owned->qp = std::move(*made);
  id->pub.qp = owned->qp.get();
  QPCM_DEBUG_LINE("qp created id " + std::to_string(id->handle));
  const Ece kept = id->local_ece;
  Result<void> ready = InitEce(id);
  if (ready) ready = FirstMoves(id);
  if (ready) ready = SettleEce(id);
  if (!ready) {
    id->pub.qp = nullptr;
    id->local_ece = kept;
    return Fail(id, ready.error());  // `owned` frees the QP and the CQs
  }
  id->pub.pd = pd;
  id->pub.recv_cq = owned->recv_cq.get();
  id->pub.send_cq = owned->send_cq.get();
  id->pub.recv_cq_channel = owned->recv_channel.get();
  id->pub.send_cq_channel = owned->send_channel.get();
  id->qp_owned = std::move(owned);
  return 0;
}

}  // namespace

int CreateQp(Id* id, ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (attr == nullptr) return errno = EINVAL, -1;
  if (CheckReady(id) != 0) return -1;
  auto use_pd = PdFor(id, pd);
  if (!use_pd) return Fail(id, use_pd.error());
  auto owned = std::make_unique<QpResources>();
  if (auto cqs = MakeCqs(id, *owned, attr->send_cq, attr->recv_cq, attr->cap.max_send_wr,
                         attr->cap.max_recv_wr);
      !cqs)
    return Fail(id, cqs.error());
  attr->qp_type = static_cast<ibv_qp_type>(id->pub.qp_type);
  return Finish(id, std::move(owned), verbs::CreateQp(**use_pd, *attr), *use_pd);
}

int CreateQpEx(Id* id, ibv_qp_init_attr_ex* attr) {
  if (attr == nullptr) return errno = EINVAL, -1;
  if (CheckReady(id) != 0) return -1;
  ibv_pd* given = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : nullptr;
  auto use_pd = PdFor(id, given);
  if (!use_pd) return Fail(id, use_pd.error());
  attr->pd = *use_pd;
  attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
  auto owned = std::make_unique<QpResources>();
  if (auto cqs = MakeCqs(id, *owned, attr->send_cq, attr->recv_cq, attr->cap.max_send_wr,
                         attr->cap.max_recv_wr);
      !cqs)
    return Fail(id, cqs.error());
  attr->qp_type = static_cast<ibv_qp_type>(id->pub.qp_type);
  return Finish(id, std::move(owned), verbs::CreateQpEx(*id->pub.verbs, *attr), *use_pd);
}

void DestroyQp(Id* id) {
  // A QP still attached to a group cannot be destroyed (EBUSY): it leaves
  // them first; the id stays a member until rdma_leave_multicast.
  if (id->groups) id->groups->DetachQp();
  // The program's pointers first: the owners free what they point at.
  id->pub.qp = nullptr;
  id->pub.send_cq = id->pub.recv_cq = nullptr;
  id->pub.send_cq_channel = id->pub.recv_cq_channel = nullptr;
  id->qp_owned.reset();
}

void LeaveQpToProgram(Id* id) {
  if (!id->qp_owned) return;
  QpResources& owned = *id->qp_owned;
  (void)owned.qp.release();
  (void)owned.send_cq.release();
  (void)owned.recv_cq.release();
  (void)owned.send_channel.release();
  (void)owned.recv_channel.release();
  id->qp_owned.reset();
}

Result<void> DescribeSide(Id* id) {
  if (id->device == nullptr)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "describe", "", "the id has no device");
  auto described =
      Describe(*id->device, id->pub.port_num,
               id->gid_index == kAutoGid ? std::nullopt : std::optional<uint16_t>(id->gid_index));
  if (!described) return std::move(described).error();
  id->described = *described;
  id->local = (*described)->endpoint;
  if (id->psn == 0) id->psn = verbs::RandomPsn();
  IdPart part;
  part.transport = TransportOf(id);
  part.qkey = part.transport == Transport::kUd ? RDMA_UDP_QKEY : 0;
  part.initiator_depth = id->ours.initiator_depth;
  part.responder_resources = id->ours.responder_resources;
  part.qpn = (id->pub.qp != nullptr ? id->pub.qp->qp_num : id->ours.qp_num) & kQpnMask;
  part.psn = id->psn & kPsnMask;
  // The traffic class, as rdma_cm applies a TOS: the active side's is its
  // program's (rdma_set_option), on RoCE the GRH traffic class (the SL is
  // the netdev's VLAN egress map's, 0 without a VLAN); the passive side's QP
  // takes the request's, as rdma_cm's takes the request's path. On
  // InfiniBand rdma_cm asks the SA for an SL of that class; libqpcm asks no
  // SA, so there the class rides in the GRH only (when one is used).
  part.traffic_class = id->remote ? id->remote->path.traffic_class : id->tos.value_or(0);
  ApplyIdPart(id->local, part);
  return {};
}

// The composer over the library's seam: the verbs layer's, the RoCE path
// facts of a GID pair read once a second (path_cache.h).
const Composer& TheComposer() {
  static auto* env = new LibraryQpEnv;  // never freed: ids outlive static destructors
  static const Composer composer(*env);
  return composer;
}

Result<void> PlanAndValidate(Id* id, bool active, std::vector<Gid> link_ends) {
  if (!id->remote)
    return Error(ErrorCode::kProtocol, 0, "plan", "", "the peer's description is missing");
  ComposeOptions options;
  // As the IB CM: the REQ's retry count serves both sides; each side's RNR
  // retry count is the one the other side sent.
  options.plan.retry_cnt =
      std::min<uint8_t>(active ? id->ours.retry_count : id->theirs.retry_count, 7);
  options.plan.rnr_retry = std::min<uint8_t>(id->theirs.rnr_retry_count, 7);
  if (id->ack_timeout) options.plan.timeout = *id->ack_timeout;
  // The program's message sizes are its own business (rdma_cm never learns
  // them): 0 leaves the UD size rule nothing to judge.
  options.plan.message_size = 0;
  // Both sides' GIDs, where neither came from the program's address, are
  // chosen jointly from the two GID tables, the link's ends preferred.
  options.oob_addresses = std::move(link_ends);
  auto agreed = TheComposer().Agree(id->local, *id->remote, options);
  if (!agreed) return std::move(agreed).error();
  id->plan = agreed->plan;
  for (const Finding& f : agreed->findings) {
    if (f.severity == Severity::kError) {
      LogLine("validator: " + FindingToString(f) + " [" + id->mapping + "]");
    } else if (f.id == "gid-pair-none" && HasErrors(agreed->findings)) {
      LogLine("validator: " + FindingToString(f));
    } else {
      QPCM_DEBUG_LINE("validator: " + FindingToString(f));
    }
  }
  auto gate = Composer::Gate(*agreed);
  if (!gate) {
    Error e = std::move(gate).error();
    for (const Finding& f : agreed->findings) {
      if (f.severity == Severity::kError) {
        e.attribute = f.id;  // the first rule, for the REJ's text
        break;
      }
    }
    e.detail += " [" + id->mapping + "]";
    return e;
  }
  return {};
}

Result<void> QpConnect(Id* id) {
  if (id->pub.qp == nullptr || !id->plan || id->plan->qps.empty()) return {};
  verbs::VerbsQpControl control = ControlOf(id);
  verbs::QpControl* controls[] = {&control};
  QpSet set;
  set.qps = controls;
  set.transport = TransportOf(id);
  set.context = id->pub.verbs;
  set.port = id->pub.port_num;
  Agreement agreement;
  agreement.plan = *id->plan;
  agreement.local_qps = agreement.remote_qps = 1;
  if (id->remote) agreement.peer_host = id->remote->identity.host;  // published (peer_registry.h)
  Applied applied;
  auto done = TheComposer().Apply(agreement, id->local, set, applied, {}, id->mapping);
  if (!done) {
    Error e = std::move(done).error();
    if (IsGidChanged(e))
      LogLine("validator: " + FindingToString(agreement.findings.front()) + " [" + id->mapping +
              "]");
    return e;
  }
  return {};
}

Result<void> SetQpEce(Id* id, const Ece& ece) {
  if (id->pub.qp == nullptr) return {};
  return SetEce(id->pub.qp, ece);
}

void QpToError(Id* id) {
  if (id->pub.qp == nullptr || TransportOf(id) == Transport::kUd) return;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  verbs::VerbsQpControl control = ControlOf(id);
  (void)control.Modify(attr, IBV_QP_STATE);
}

int InitQpAttr(Id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask) {
  if (qp_attr == nullptr || qp_attr_mask == nullptr || id->device == nullptr)
    return errno = EINVAL, -1;
  Transport t = TransportOf(id);
  verbs::ModifyRequest request;
  switch (qp_attr->qp_state) {
    case IBV_QPS_INIT:
      if (id->psn == 0) id->psn = verbs::RandomPsn();
      request = verbs::BuildInit(t, InitAttrs(id), t == Transport::kUd ? 0u : kRcAccess);
      break;
    case IBV_QPS_RTR:
    case IBV_QPS_RTS:
      if (!id->plan || id->plan->qps.empty()) {
        LogLine("rdma_init_qp_attr: RTR/RTS attributes exist only once the peer's reply arrived");
        return errno = EINVAL, -1;
      }
      request = qp_attr->qp_state == IBV_QPS_RTR ? verbs::BuildRtr(t, id->plan->qps[0])
                                                 : verbs::BuildRts(t, id->plan->qps[0]);
      break;
    default:
      return errno = EINVAL, -1;
  }
  *qp_attr = request.attr;
  *qp_attr_mask = request.mask;
  return 0;
}

ibv_ah_attr PeerAh(const Id* id) {
  if (!id->plan || id->plan->qps.empty()) return ibv_ah_attr{};
  return verbs::ToAhAttr(id->plan->qps[0].ah);
}

}  // namespace qpconnect::rdmacm
