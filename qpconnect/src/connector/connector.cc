// SPDX-License-Identifier: MIT
#include "qpconnect/connector.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "phase_clock.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/resources.h"

namespace qpconnect {
namespace {

using Clock = std::chrono::steady_clock;

Error AdoptError(std::string attribute, std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, "adopt QPs", std::move(attribute),
               std::move(detail)};
}

Result<Transport> TransportOf(const ibv_qp& qp) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    if (verbs::ToIbvQpType(t) == qp.qp_type) return t;
  }
  return AdoptError("qp_type", "QP type " + std::to_string(static_cast<int>(qp.qp_type)) +
                                   " is not RC, UC or UD");
}

using connector_internal::PhaseClock;

}  // namespace

const char* ConnectPhaseName(ConnectPhase phase) {
  switch (phase) {
    case ConnectPhase::kOpen:
      return "open";
    case ConnectPhase::kExchange:
      return "exchange";
    case ConnectPhase::kValidate:
      return "validate";
    case ConnectPhase::kConnect:
      return "connect";
    case ConnectPhase::kBarrier:
      return "barrier";
  }
  return "unknown";
}

// The QPs being connected, owned (a Session) or adopted (the caller's).
class Connector::Impl {
 public:
  // Owning mode.
  std::unique_ptr<verbs::Session> session;
  // Adopted mode.
  std::vector<ibv_qp*> adopted;
  verbs::QpEnv* env = &verbs::QpEnv::Default();
  std::vector<std::unique_ptr<verbs::QpControl>> controls;  // one per adopted QP
  std::vector<verbs::QpControl*> control_ptrs;
  verbs::PeerHandles peer;  // after Connect(): remote QPNs, UD address handles
  uint32_t remote_qkey = 0;
  Transport transport = Transport::kRc;

  ConnectReport report;
  bool connect_called = false;

  size_t NumQps() const { return session ? session->num_qps() : adopted.size(); }
  ibv_qp* Qp(size_t i) const { return session ? session->qp(i) : adopted.at(i); }

  // The agreed connection (Agree()), until ConnectAgreed().
  std::optional<Agreement> agreement;

  Composer composer() const { return Composer(*env); }

  // The QPs as the composer moves them.
  QpSet Qps() {
    QpSet set;
    set.transport = transport;
    set.port = report.local.port.port_num;
    if (NumQps() > 0) set.context = Qp(0)->context;
    if (session) {
      set.qps = session->controls();
      set.pd_of = [this](size_t) -> ibv_pd& { return session->pd(); };
    } else {
      set.qps = control_ptrs;
      set.pd_of = [this](size_t i) -> ibv_pd& { return *adopted[i]->pd; };
    }
    return set;
  }

  // The PathQuery of the GIDs in use, for the proof's witness.
  std::optional<RocePathQuery> PathQuery() const {
    const EndpointInfo& l = report.local;
    if (l.port.link_layer != LinkLayer::kEthernet || !l.path.sgid || !report.remote ||
        !report.remote->path.sgid || l.path.sgid->type != GidType::kRoceV2) {
      return std::nullopt;
    }
    return RocePathQuery{*l.path.sgid, report.remote->path.sgid->gid};
  }
};

Connector::Connector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connector::~Connector() = default;

Result<std::unique_ptr<Connector>> Connector::Open(const verbs::SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  {
    PhaseClock clock(impl->report.timings.open);
    auto session = verbs::Session::Open(options);
    if (!session) return std::move(session).error();
    impl->session = std::move(*session);
  }
  const verbs::SessionTimings& st = impl->session->timings();
  impl->report.timings.setup = st.setup;
  impl->report.timings.create = st.create;
  impl->report.timings.init = st.init;
  impl->transport = impl->session->transport();
  if (options.qp_env != nullptr) impl->env = options.qp_env;
  impl->report.local = impl->session->Local();
  return std::unique_ptr<Connector>(new Connector(std::move(impl)));
}

Result<std::unique_ptr<Connector>> Connector::Adopt(std::vector<AdoptedQp> qps,
                                                    const AdoptOptions& options) {
  if (qps.empty()) return AdoptError("qps", "no QP given");
  if (options.psn && *options.psn > kPsnMask) {
    return AdoptError("sq_psn", "PSN " + std::to_string(*options.psn) + " exceeds 24 bits");
  }
  auto impl = std::make_unique<Impl>();
  PhaseClock clock(impl->report.timings.open);
  for (size_t i = 0; i < qps.size(); ++i) {
    if (qps[i].qp == nullptr) return AdoptError("qps", "QP " + std::to_string(i) + " is null");
  }
  auto transport = TransportOf(*qps[0].qp);
  if (!transport) return std::move(transport).error();
  for (size_t i = 1; i < qps.size(); ++i) {
    if (qps[i].qp->qp_type != qps[0].qp->qp_type) {
      return AdoptError("qp_type", "QP " + std::to_string(i) + " is of another type than QP 0");
    }
    if (qps[i].qp->context != qps[0].qp->context) {
      return AdoptError("context", "QP " + std::to_string(i) + " is on another device than QP 0");
    }
  }
  impl->transport = *transport;
  if (options.qp_env != nullptr) impl->env = options.qp_env;

  verbs::DescribeOptions d = options;  // the embedded options, with the QPs' transport
  d.transport = *transport;
  auto described = impl->env->Describe(*qps[0].qp->context, d);
  if (!described) return std::move(described).error();
  EndpointInfo local = std::move(described->endpoint);

  QpAttrs init;
  init.port_num = options.port;
  init.pkey_index = local.keys.pkey_index;
  init.qkey = options.qkey;
  const unsigned access = options.access_flags.value_or(verbs::DefaultAccessFlags(*transport));
  std::vector<uint32_t> qpns;
  std::vector<std::optional<MrDescriptor>> mrs;
  std::vector<std::chrono::nanoseconds> init_samples;
  for (size_t i = 0; i < qps.size(); ++i) {
    ibv_qp& qp = *qps[i].qp;
    auto control = impl->env->Control(qp);
    auto state = control->State();
    if (!state) {
      Error e = std::move(state).error();
      e.detail = "QP " + std::to_string(i);
      return e;
    }
    if (*state == verbs::QpState::kReset) {
      const auto start = Clock::now();
      QPC_TRY(verbs::MoveToInit(*control, *transport, init, access));
      init_samples.push_back(Clock::now() - start);
    } else if (*state == verbs::QpState::kInit) {
      // libibverbs reports port_num of an INIT QP; 0 means the provider did not say.
      auto port = control->PortNum();
      if (!port) {
        Error e = std::move(port).error();
        e.detail = "QP " + std::to_string(i);
        return e;
      }
      if (*port != 0 && *port != options.port) {
        return AdoptError("port_num", "QP " + std::to_string(i) + " (qpn " +
                                          std::to_string(qp.qp_num) + ") is on port " +
                                          std::to_string(*port) + ", not port " +
                                          std::to_string(options.port));
      }
    } else {
      return AdoptError("qp_state", "QP " + std::to_string(i) + " (qpn " +
                                        std::to_string(qp.qp_num) + ") is in state " +
                                        verbs::QpStateName(*state) +
                                        "; adopt QPs in RESET or INIT");
    }
    impl->control_ptrs.push_back(control.get());
    impl->controls.push_back(std::move(control));
    qpns.push_back(qp.qp_num);
    mrs.push_back(qps[i].mr);
    impl->adopted.push_back(&qp);
  }
  verbs::AddQps(local, qpns, options.psn.value_or(verbs::RandomPsn()), mrs);
  impl->report.local = std::move(local);
  impl->report.timings.init = verbs::SummarizeQpStep(init_samples);
  return std::unique_ptr<Connector>(new Connector(std::move(impl)));
}

const EndpointInfo& Connector::Local() const { return impl_->report.local; }

Transport Connector::transport() const { return impl_->transport; }
size_t Connector::num_qps() const { return impl_->NumQps(); }
ibv_qp* Connector::qp(size_t i) const { return impl_->Qp(i); }

ibv_ah* Connector::ah(size_t i) const {
  if (impl_->session) return impl_->session->ah(i);
  return i < impl_->peer.ahs.size() ? impl_->peer.ahs[i].get() : nullptr;
}

uint32_t Connector::remote_qpn(size_t i) const {
  if (impl_->session) return impl_->session->remote_qpn(i);
  return i < impl_->peer.remote_qpns.size() ? impl_->peer.remote_qpns[i] : 0;
}

uint32_t Connector::remote_qkey() const {
  return impl_->session ? impl_->session->send_qkey() : impl_->remote_qkey;
}

verbs::Session* Connector::session() { return impl_->session.get(); }

Result<void> Connector::Recycle() {
  if (!impl_->session) {
    return Error{ErrorCode::kInvalidArgument, 0, "recycle", "",
                 "only an owning connector (Open) recycles its QPs; adopted QPs are the "
                 "caller's"};
  }
  ConnectReport& r = impl_->report;
  r = ConnectReport{};
  QPC_TRY(impl_->session->Recycle());
  r.local = impl_->session->Local();
  r.timings.open = impl_->session->timings().recycle;
  r.timings.init = impl_->session->timings().init;
  impl_->connect_called = false;
  return Ok();
}
const ConnectReport& Connector::report() const { return impl_->report; }

verbs::ProofWitness Connector::BeginProof() const {
  return verbs::ProofWitness::Begin(*impl_->env, *impl_->Qp(0), impl_->report.local.port.port_num,
                                    impl_->PathQuery());
}

void Connector::Prepare() { impl_->composer().Prepare(impl_->report.local); }

Result<void> Connector::Agree(const EndpointInfo& remote, const ConnectorOptions& options,
                              std::vector<Gid> oob_addresses) {
  ConnectReport& r = impl_->report;
  if (!r.remote || &*r.remote != &remote) r.remote = remote;
  r.reached = ConnectPhase::kValidate;
  if (options.on_step)
    options.on_step(ConnectPhase::kValidate, "validating both descriptions and the plan");
  ComposeOptions co;
  co.plan = options.plan;
  co.path_source = options.path_source;
  co.oob_addresses = std::move(oob_addresses);
  co.grh = options.grh;
  if (options.path_source && options.on_step) {
    options.on_step(ConnectPhase::kValidate, "asking for the path to the peer (path source)");
  }
  auto agreed = impl_->composer().Agree(r.local, *r.remote, co);
  if (!agreed) return std::move(agreed).error();
  r.gid_pair = agreed->gid_pair;
  r.sa_path = agreed->sa_path;
  r.roce_path = agreed->roce_path;
  r.plan = agreed->plan;
  r.findings = agreed->findings;
  r.timings.path += agreed->path_time;
  r.timings.validate += agreed->validate_time;
  impl_->agreement = std::move(*agreed);
  return Ok();
}

Result<void> Connector::ConnectAgreed(const ConnectorOptions& options) {
  ConnectReport& r = impl_->report;
  if (!impl_->agreement) {
    return Error{ErrorCode::kInvalidArgument, 0, "connect", "", "ConnectAgreed() before Agree()"};
  }
  Agreement& a = *impl_->agreement;
  QPC_TRY(Composer::Gate(a, options.validate));

  Composer::ApplyHooks hooks;
  hooks.before_recheck = options.before_rtr;
  auto start = std::chrono::steady_clock::now();
  hooks.before_moves = [&] {
    start = std::chrono::steady_clock::now();
    r.reached = ConnectPhase::kConnect;
    if (options.on_step) {
      options.on_step(ConnectPhase::kConnect,
                      "moving " + std::to_string(num_qps()) + " QP(s) to RTR and RTS");
    }
  };
  hooks.progress = options.on_progress;
  if (!hooks.progress && impl_->session) hooks.progress = impl_->session->options().on_progress;
  Applied applied;
  auto done = impl_->composer().Apply(a, r.local, impl_->Qps(), applied, hooks);
  r.findings = a.findings;  // gid-changed-before-rtr, when it was
  if (r.reached == ConnectPhase::kConnect)
    r.timings.connect += std::chrono::steady_clock::now() - start;
  r.timings.rtr = applied.times.rtr;
  r.timings.rts = applied.times.rts;
  if (impl_->session) {
    impl_->session->Connected(a.plan, std::move(applied.peer), applied.times);
  } else {
    impl_->peer = std::move(applied.peer);
    impl_->remote_qkey = verbs::UdSendQkey(a.plan, r.local.keys.qkey);
  }
  QPC_TRY(std::move(done));
  return Ok();
}

Result<ConnectReport> Connector::Connect(Exchanger& exchanger, const ConnectorOptions& options) {
  ConnectReport& r = impl_->report;
  auto step = [&](ConnectPhase phase, const std::string& what) {
    r.reached = phase;
    if (options.on_step) options.on_step(phase, what);
  };
  // Tells the peer we give up, so it fails at once instead of at its deadline.
  auto fail = [&](Error e, const std::string& why) -> Error {
    exchanger.Abort(why, std::chrono::milliseconds(2000));
    return e;
  };
  if (impl_->connect_called) {
    return Error{ErrorCode::kInvalidArgument, 0, "connect", "",
                 "Connect() was already called on this connector"};
  }
  impl_->connect_called = true;

  // Published, so that the peer's validator expects the SA's path here.
  r.local.path.path_from_sa = static_cast<bool>(options.path_source);
  Prepare();
  step(ConnectPhase::kExchange, "exchanging descriptions");
  {
    PhaseClock clock(r.timings.exchange);
    ++r.timings.round_trips;
    auto peer = exchanger.Exchange(r.local, options.timeout);
    if (!peer) return std::move(peer).error();
    r.remote = std::move(*peer);
  }
  step(ConnectPhase::kExchange, "received the peer's description: " + r.remote->identity.host +
                                    " " + r.remote->identity.device);
  if (auto agreed = Agree(*r.remote, options, exchanger.Addresses()); !agreed) {
    return fail(std::move(agreed).error(), "no path to the peer");
  }
  if (auto c = ConnectAgreed(options); !c) {
    Error e = std::move(c).error();
    const std::string why = e.attribute == "qps"                   ? "qp count differs"
                            : IsGidChanged(e)                      ? "its GID changed before RTR"
                            : r.reached == ConnectPhase::kValidate ? "validation failed"
                                                                   : "modify failed";
    return fail(std::move(e), why);
  }

  if (!options.barrier_stage.empty()) {
    step(ConnectPhase::kBarrier, "all QPs at RTS; waiting for the peer (barrier)");
    PhaseClock clock(r.timings.barrier);
    ++r.timings.round_trips;
    QPC_TRY(exchanger.Barrier(options.barrier_stage, options.timeout));
  }
  r.connected = true;
  return r;
}

}  // namespace qpconnect
