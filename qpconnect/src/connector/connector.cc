#include "qpconnect/connector.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../verbs/connect_peer.h"
#include "qpconnect/gid_recheck.h"
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

// Adds the time since `start` to `slot` when destroyed (every return path).
class PhaseClock {
 public:
  explicit PhaseClock(std::chrono::nanoseconds& slot) : slot_(slot), start_(Clock::now()) {}
  ~PhaseClock() { slot_ += Clock::now() - start_; }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

 private:
  std::chrono::nanoseconds& slot_;
  Clock::time_point start_;
};

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

Result<void> RefuseOnFindings(const std::vector<Finding>& findings) {
  size_t errors = 0;
  std::string first;
  for (const auto& f : findings) {
    if (f.severity != Severity::kError) continue;
    if (errors++ == 0) first = FindingToString(f);
  }
  if (errors == 0) return Ok();
  return Error{ErrorCode::kIncompatible, 0, "validate", "",
               "the validator found " + std::to_string(errors) +
                   (errors == 1 ? " error" : " errors") +
                   "; nothing was modified (first: " + first + ")"};
}

// The connector connects every QP it holds, entry i to the peer's entry i:
// a QP count that differs from the peer's is an error here, where the
// validator only warns (qp-count-mismatch: a plan of min(N, M) entries is
// valid for a caller that connects just those). Both sides see the same two
// counts, so both refuse alike, before anything is modified. The derived
// plan's min(N, M) entries are a consequence, not a second fault: the
// plan-endpoint-mismatch on the QP list is dropped.
namespace {
void HoldQpCountsEqual(std::vector<Finding>& findings, size_t local_qps, size_t remote_qps) {
  if (local_qps == remote_qps) return;
  std::erase_if(findings, [](const Finding& f) {
    return f.id == "plan-endpoint-mismatch" && f.attribute == "qps";
  });
  for (auto& f : findings) {
    if (f.id != "qp-count-mismatch") continue;
    f.severity = Severity::kError;
    auto qps = [](size_t n) { return std::to_string(n) + (n == 1 ? " QP" : " QPs"); };
    f.message = "this side has " + qps(local_qps) + " and the peer " + qps(remote_qps) +
                ": refused before any modify, as the connector connects every QP";
  }
  // Errors first, as Validate() orders them.
  std::stable_partition(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity == Severity::kError; });
}
}  // namespace

namespace {
// RecheckGid()'s refusal.
bool IsGidChanged(const Error& e) {
  return e.code == ErrorCode::kIncompatible && e.operation == "validate" &&
         e.attribute == "sgid_index";
}

// A finding of the connector's own (the joint GID choice's, the path
// facts') among the validator's, errors first.
void AddOwnFinding(ConnectReport& r, std::optional<Finding> f) {
  if (!f) return;
  r.findings.push_back(std::move(*f));
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
}

// RoCE: the netdevs behind this side's GID table as the kernel has them,
// published so that the peer compares its neighbour entry and VLAN with them
// (rules_path.cc).
void PublishNetdevs(EndpointInfo& local, verbs::QpEnv& env) {
  if (local.port.link_layer != LinkLayer::kEthernet || !local.netdevs.empty()) return;
  std::vector<std::string> names;
  for (const GidEntry& g : local.gid_table) {
    if (!g.netdev.empty() && std::find(names.begin(), names.end(), g.netdev) == names.end()) {
      names.push_back(g.netdev);
    }
  }
  if (!names.empty()) local.netdevs = env.ReadNetdevs(names);
}
}  // namespace

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

  // The GID this side chose, read again from the port right before RTR
  // (gid_recheck.h): a change is the error finding gid-changed-before-rtr
  // and kIncompatible (operation "validate"), nothing modified.
  Result<void> RecheckGid() {
    if (!report.local.path.sgid || NumQps() == 0) return Ok();
    auto now = env->ReadGids(*Qp(0)->context, report.local.port.port_num);
    if (!now) return std::move(now).error();
    auto f = CheckGidUnchanged(*report.local.path.sgid, *now);
    if (!f) return Ok();
    const std::string text = FindingToString(*f);
    report.findings.insert(report.findings.begin(), std::move(*f));
    return Error{ErrorCode::kIncompatible, 0, "validate", "sgid_index",
                 "the GID table changed before RTR; nothing was modified (" + text + ")"};
  }

  // RoCE v2: the kernel's facts on the path between the two GIDs in use
  // (roce_path.h), for the validator's path rules. nullopt off RoCE v2 (v1
  // is not routed), without both GIDs, or when the env reads none.
  std::optional<RocePathFacts> ReadPath() const {
    auto q = PathQuery();
    if (!q) return std::nullopt;
    return env->ReadPath(*q);
  }
  std::optional<RocePathQuery> PathQuery() const {
    const EndpointInfo& l = report.local;
    if (l.port.link_layer != LinkLayer::kEthernet || !l.path.sgid || !report.remote ||
        !report.remote->path.sgid || l.path.sgid->type != GidType::kRoceV2) {
      return std::nullopt;
    }
    return RocePathQuery{*l.path.sgid, report.remote->path.sgid->gid};
  }

  Result<void> Transition(const ConnectionPlan& plan, const std::string& hint,
                          const verbs::ProgressFn& progress) {
    if (session) {
      auto done = session->Connect(plan, *report.remote, hint, progress);
      report.timings.rtr = session->timings().rtr;
      report.timings.rts = session->timings().rts;
      return done;
    }
    // The one path and order of the owning session (verbs/qp_steps.h).
    verbs::ConnectTimes times;
    auto done = verbs::ConnectToPlan(
        control_ptrs, transport, plan, hint, *env,
        [this](size_t i) -> ibv_pd& { return *adopted[i]->pd; }, progress, peer, times);
    report.timings.rtr = times.rtr;
    report.timings.rts = times.rts;
    QPC_TRY(std::move(done));
    remote_qkey = verbs::UdSendQkey(plan, report.local.keys.qkey);
    return Ok();
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

void Connector::JoinGidChoice() { qpconnect::JoinGidChoice(impl_->report.local); }

const GidPairChoice& Connector::ChooseGidPairWith(EndpointInfo& remote,
                                                  std::vector<Gid> oob_addresses) {
  ConnectReport& r = impl_->report;
  r.gid_pair = ApplyGidPair(r.local, remote, std::move(oob_addresses));
  return *r.gid_pair;
}
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
  qpconnect::JoinGidChoice(r.local);
  PublishNetdevs(r.local, *impl_->env);
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
  r.gid_pair = ApplyGidPair(r.local, *r.remote, exchanger.Addresses());

  PlanOptions plan_options = options.plan;
  if (options.path_source) {
    step(ConnectPhase::kValidate, "asking for the path to the peer (path source)");
    PhaseClock clock(r.timings.path);
    auto path = options.path_source(r.local, *r.remote);
    if (!path) return fail(std::move(path).error(), "no path to the peer");
    plan_options.sa_path = *path;
  }
  r.sa_path = plan_options.sa_path;
  ConnectionPlan plan;
  {
    PhaseClock clock(r.timings.validate);
    plan = PlanConnection(r.local, *r.remote, plan_options);
  }
  if (auto c = ConnectToPeer(*r.remote, std::move(plan), options); !c) {
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

Result<void> Connector::ConnectToPeer(const EndpointInfo& remote, ConnectionPlan plan,
                                      const ConnectorOptions& options) {
  ConnectReport& r = impl_->report;
  auto step = [&](ConnectPhase phase, const std::string& what) {
    r.reached = phase;
    if (options.on_step) options.on_step(phase, what);
  };
  if (!r.remote || &*r.remote != &remote) r.remote = remote;
  if (!r.sa_path) r.sa_path = options.plan.sa_path;  // callers other than Connect()

  step(ConnectPhase::kValidate, "validating both descriptions and the plan");
  {
    PhaseClock clock(r.timings.validate);
    r.plan = std::move(plan);
    r.roce_path = impl_->ReadPath();
    const ValidationInput input{&r.local, &*r.remote, *r.plan, std::nullopt};
    r.findings = r.sa_path     ? Validate(input, *r.sa_path)
                 : r.roce_path ? Validate(input, *r.roce_path)
                               : Validate(input);
    HoldQpCountsEqual(r.findings, num_qps(), r.remote->qps.size());
    AddOwnFinding(r, r.gid_pair ? GidPairFinding(*r.gid_pair) : std::nullopt);
    AddOwnFinding(r, r.roce_path ? std::optional(RocePathFinding(*r.roce_path)) : std::nullopt);
  }
  if (options.validate) QPC_TRY(RefuseOnFindings(r.findings));
  if (r.remote->qps.size() != num_qps() || r.plan->qps.size() != num_qps()) {
    return Error{ErrorCode::kIncompatible, 0, "connect", "qps",
                 "this side has " + std::to_string(num_qps()) + " QPs, the peer " +
                     std::to_string(r.remote->qps.size()) + " (use the same --qps on both sides)"};
  }

  if (options.before_rtr) options.before_rtr();
  QPC_TRY(impl_->RecheckGid());

  step(ConnectPhase::kConnect, "moving " + std::to_string(num_qps()) + " QP(s) to RTR and RTS");
  PhaseClock clock(r.timings.connect);
  const std::string hint = HasErrors(r.findings) ? "the validator reported errors above" : "";
  return impl_->Transition(*r.plan, hint, options.on_progress);
}

}  // namespace qpconnect
