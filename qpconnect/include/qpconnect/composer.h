// SPDX-License-Identifier: MIT
// The one composer of a connection: what happens between "this side is
// described" and "every QP is at RTS", the same for every front end
// (qp-connect's two dialects through the Connector, the C API, the mesh,
// libqpcm and its warm-up). Each front end keeps only its own wire and API;
// the steps, their order, their findings and their refusal texts are here:
//
//   Prepare(local)        before the description goes out (RoCE): an
//                         automatically chosen GID joins the joint choice,
//                         the netdevs behind the GID table and each GID's
//                         prefix length (address_prefix.h) are published
//   Agree(local, remote)  after the exchange: the joint GID pair written
//                         into both descriptions (gid_pair.h), the SA's path
//                         (ComposeOptions::path_source) or, on RoCE v2, the
//                         kernel's path facts (roce_path.h), the plan, the
//                         validator, and the composer's own findings
//                         (gid-pair-*, path-facts, the QP counts). Nothing is
//                         modified.
//   Gate(agreement)       kIncompatible when a finding is an error
//   Apply(agreement, qps) right before RTR the chosen GID read again
//                         (gid_recheck.h), then every QP INIT->RTR->RTS in
//                         the one order (verbs/qp_steps.h), UD address
//                         handles made
//
// Connect() (the Connector) runs them all between its exchange and its
// barrier; the mesh runs Agree on every edge, one collective, then Apply; a
// libqpcm id runs Agree and Apply at its accept or its reply.
//
// Thread-safety: a Composer holds only its QpEnv; its calls may run on any
// thread at once as far as the env allows (QpEnv::Default() does). The
// values passed in are the caller's, one thread at a time.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/gid_pair.h"
#include "qpconnect/path_record.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/resources.h"

namespace qpconnect {

// Where the path to the peer comes from, when not from the two descriptions
// alone: called once per Agree(), after the joint GID choice, with both
// sides' descriptions. Its PathRecord becomes PlanOptions::sa_path (the plan
// takes DLID, SL, path MTU, ACK timeout and, across routers, the GRH fields
// from it) and the validator judges the plan against it (rules_sa.cc). An
// error refuses the connection before any modify.
// sa::ResolvePeerPath (qpconnect/sa/peer_path.h) asks the InfiniBand subnet
// administrator, as rdma_cm does; tests may give any function.
using PathSource =
    std::function<Result<PathRecord>(const EndpointInfo& local, const EndpointInfo& remote)>;

// How one connection is agreed.
struct ComposeOptions {
  PlanOptions plan;
  // Empty: the path comes from the descriptions (PlanConnection). Set: see
  // PathSource; plan.sa_path, if also set, is replaced by its answer.
  PathSource path_source;
  // The out-of-band channel's two ends as GIDs (Exchanger::Addresses()),
  // the joint GID choice's preference; empty for channels without
  // addresses.
  std::vector<Gid> oob_addresses;
  // Set: the GRH on (true) or off (false) in every plan entry whatever the
  // port, for a peer whose own convention decides it (the stock pingpong
  // programs use one only towards a GID with a non-zero interface id); the
  // validator then judges that (grh-required, dgid-zero).
  std::optional<bool> grh;
  // This side connects every QP it holds to the peer's of the same
  // position, so a QP count that differs from the peer's is an error
  // (qp-count-mismatch raised to an error, the derived
  // plan-endpoint-mismatch dropped). Both sides see the same two counts and
  // refuse alike. false: the validator's warning stands (a caller that
  // connects only min(N, M)).
  bool connect_every_qp = true;
  // RoCE v2: read the kernel's path facts (QpEnv::ReadPath) and judge them.
  bool read_path = true;
};

// What Agree() learned, filled as far as it got. Every front end reports it.
struct Agreement {
  // The joint GID choice (RoCE): when chosen, local.path.sgid and
  // remote.path.sgid passed to Agree() were set to the pair.
  std::optional<GidPairChoice> gid_pair;
  // The PathRecord ComposeOptions::path_source gave (or plan.sa_path).
  std::optional<PathRecord> sa_path;
  // RoCE v2: the kernel's facts on the path between the two GIDs.
  std::optional<RocePathFacts> roce_path;
  ConnectionPlan plan;
  // The validator's on the plan (and the SA path or the path facts), then
  // the composer's own: gid-pair-chosen / gid-pair-none, path-facts (info);
  // errors first. Apply() inserts gid-changed-before-rtr in front.
  std::vector<Finding> findings;
  // The peer's host as it described itself (remote.identity.host),
  // published with each QP Apply() connects (peer_registry.h).
  std::string peer_host;
  size_t local_qps = 0;  // the counts Gate() compares
  size_t remote_qps = 0;
  bool connect_every_qp = true;
  std::chrono::nanoseconds path_time{0};      // path_source
  std::chrono::nanoseconds validate_time{0};  // path facts + plan + validator
};

// The QPs of this side as Apply() moves them: QP i to the plan's entry i.
struct QpSet {
  std::span<verbs::QpControl* const> qps;
  Transport transport = Transport::kRc;
  // The device and port whose GID table is read again before RTR; null: no
  // re-check (a QP the caller moves itself).
  ibv_context* context = nullptr;
  uint8_t port = 1;
  // UD: the PD of QP i, for the peer's address handle. REQUIRED on UD; may
  // be empty otherwise.
  std::function<ibv_pd&(size_t)> pd_of;
};

// What Apply() made and measured.
struct Applied {
  verbs::PeerHandles peer;  // remote QPNs and (UD) address handles
  verbs::ConnectTimes times;
};

class Composer {
 public:
  // `env`: the hardware seam (reads and moves). Not owned; must outlive
  // this.
  explicit Composer(verbs::QpEnv& env = verbs::QpEnv::Default()) : env_(&env) {}

  verbs::QpEnv& env() const { return *env_; }

  // Before `local` is published. RoCE: an automatically chosen GID joins the
  // joint choice (JoinGidChoice); the netdevs behind the GID table are
  // published (MAC, VLAN, MTU: the peer compares its neighbour entry with
  // them) unless local.netdevs is already filled, and each RoCE v2 GID's
  // prefix length on its netdev (GidEntry::prefix_len, unless already set).
  // Nothing else changes.
  void Prepare(EndpointInfo& local) const;

  // After the exchange: the joint GID pair (written into both), the path
  // (path_source or the kernel's RoCE facts), the plan, the validator and
  // the composer's own findings, for `local` (holding its QPs) and
  // `remote`. Touches no QP. Errors: the path source's, as it returned it.
  Result<Agreement> Agree(EndpointInfo& local, EndpointInfo& remote,
                          const ComposeOptions& options) const;

  // The validation gate: with `refuse_on_findings`, kIncompatible
  // (operation "validate") naming how many error findings there are and the
  // first ("the validator found N errors; nothing was modified (first:
  // ...)"); then, when the agreement connects every QP and the counts
  // differ, kIncompatible (attribute "qps"), whatever `refuse_on_findings`
  // says. Ok otherwise (warnings and infos pass).
  static Result<void> Gate(const Agreement& agreement, bool refuse_on_findings = true);

  // The GID `local` chose, read again from qps.context's port (one entry;
  // the whole table only to say where it went): a change is the error
  // finding gid-changed-before-rtr, inserted first into agreement.findings,
  // and kIncompatible (operation "validate", attribute "sgid_index"),
  // nothing modified. Then every QP INIT->RTR->RTS to the agreed plan
  // (verbs::ConnectToPlan; `hint` is appended to a refusal, and "the
  // validator reported errors above" when it did). Connected, each QP's
  // peer is published through the env (QpEnv::PublishPeers: qp-inspect
  // reads it; a failure there never fails this). kVerbs naming
  // transition, mask, values and cause. `applied` holds what was made and
  // timed on every path.
  // REQUIRES: agreement.plan.qps.size() == qps.qps.size().
  struct ApplyHooks {
    std::function<void()> before_recheck;  // first (tests widen the window)
    std::function<void()> before_moves;    // the GID held: the QPs move next
    verbs::ProgressFn progress;            // after each QP's RTR and RTS
  };
  Result<void> Apply(Agreement& agreement, const EndpointInfo& local, const QpSet& qps,
                     Applied& applied, const ApplyHooks& hooks = {},
                     const std::string& hint = {}) const;

  // The GID re-check alone (Apply's first step), for a caller whose QPs are
  // moved by the program (rdma_init_qp_attr).
  Result<void> RecheckGid(Agreement& agreement, const EndpointInfo& local, const QpSet& qps) const;

 private:
  verbs::QpEnv* env_;
};

// The validation gate on findings alone (Composer::Gate's first half):
// kIncompatible (operation "validate") when any finding is an error.
Result<void> RefuseOnFindings(const std::vector<Finding>& findings);

// True for the error Apply() returns when the GID changed before RTR.
bool IsGidChanged(const Error& e);

}  // namespace qpconnect
