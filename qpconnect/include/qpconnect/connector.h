// SPDX-License-Identifier: MIT
// The connect flow as one library object: describe the local QPs, exchange
// descriptions with the peer over any Exchanger, plan, validate, move every QP
// INIT->RTR->RTS, and pass a barrier, telling the peer when this side gives up.
//
// Two modes:
//   owning  Connector::Open() creates everything (device context, PD, CQs, N
//           QPs, one registered buffer, receives posted), as `qp-connect` does;
//           session() then gives the data path (verbs/traffic.h proves it).
//   adopted Connector::Adopt() takes QPs the caller created (its PD, CQs, SRQ,
//           queue sizes; RC, UC or UD) and its MR descriptors. The connector
//           only chooses the port's GID and P_Key, describes, exchanges,
//           validates and transitions them. The caller keeps ownership of its
//           QPs and everything they hang off; the connector owns only what it
//           creates itself (UD address handles, in the QPs' PD).
// In both modes qp(i) is the i-th ibv_qp*, and the peer's QP i is its partner.
//
//   auto c = Connector::Open(options);            // or Adopt(...)
//   auto r = (*c)->Connect(exchanger, {});        // Result<ConnectReport>
//   if (!r) { /* (*c)->report() says how far it got: findings, stage, timings */ }
//
// Connect() refuses before any ibv_modify_qp when the validator finds an error
// (kIncompatible, with the findings in the report) and, on every failure after
// the exchange began, calls exchanger.Abort() so that the peer fails at once
// instead of at its deadline.
//
// Thread-safety: one thread at a time per Connector. Nothing is written to
// stdout/stderr (log.h).
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/composer.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/exchanger.h"
#include "qpconnect/gid_pair.h"
#include "qpconnect/gid_select.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/proof_witness.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect {

// The phases of the flow, in order. Names ("open", "exchange", "validate",
// "connect", "barrier") are stable: they appear in qp-connect's JSON "stage".
enum class ConnectPhase : uint8_t { kOpen, kExchange, kValidate, kConnect, kBarrier };
const char* ConnectPhaseName(ConnectPhase phase);

// Wall time spent in each phase (zero for a phase not reached), and inside
// open and connect, per verbs step, the sum and the spread over the QPs.
struct PhaseTimings {
  std::chrono::nanoseconds open{0};      // create + describe + INIT (+ receives posted)
  std::chrono::nanoseconds exchange{0};  // Exchange(): both descriptions swapped
  std::chrono::nanoseconds validate{0};  // PlanConnection() + Validate() (+ path below)
  std::chrono::nanoseconds path{0};      // ConnectorOptions::path_source, when set
  std::chrono::nanoseconds connect{0};   // INIT->RTR->RTS of every QP (+ UD address handles)
  std::chrono::nanoseconds barrier{0};   // Barrier() after RTS
  // Parts of open: owning mode only (zero when adopted).
  std::chrono::nanoseconds setup{0};  // device, port, GID, PD, CQs, buffer and MR
  verbs::QpStepTimes create;          // ibv_create_qp
  // RESET->INIT (owning: and the receives posted; adopted: only the QPs
  // adopted in RESET).
  verbs::QpStepTimes init;
  // Parts of connect.
  verbs::QpStepTimes rtr;  // INIT->RTR (UD: and the address handle)
  verbs::QpStepTimes rts;  // RTR->RTS
  // Exchanger calls that waited for the peer: Exchange() and Barrier(), one
  // round trip each.
  uint32_t round_trips = 0;
};

// What Connect() learned, filled as far as the flow got (also on failure).
struct ConnectReport {
  EndpointInfo local;
  std::optional<EndpointInfo> remote;  // set once the exchange succeeded
  std::optional<ConnectionPlan> plan;  // set once planned
  // The PathRecord ConnectorOptions::path_source gave; plan->from_sa names
  // the attributes taken from it.
  std::optional<PathRecord> sa_path;
  // The joint GID choice (gid_pair.h), made after the exchange (RoCE): when
  // chosen, local.path.sgid and remote->path.sgid above are the pair.
  std::optional<GidPairChoice> gid_pair;
  // RoCE v2: the kernel's facts on the path between the two GIDs, read in
  // the validate phase (QpEnv::ReadPath) and judged by the validator's path
  // rules (route-missing, neighbour-mac-mismatch, ...; docs/faults.md).
  std::optional<RocePathFacts> roce_path;
  // The validator's, on the plan above (and on roce_path); then the joint
  // choice's (gid-pair-chosen, gid-pair-none), the path facts' summary
  // (path-facts, info) and gid-changed-before-rtr.
  std::vector<Finding> findings;
  ConnectPhase reached = ConnectPhase::kOpen;  // the last phase entered
  bool connected = false;                      // every QP at RTS and the barrier passed
  PhaseTimings timings;
};

// Options of Connect(), common to both modes.
struct ConnectorOptions {
  PlanOptions plan;
  // Empty: the path comes from the descriptions (PlanConnection). Set: see
  // PathSource (composer.h). plan.sa_path, if also set, is replaced by its
  // answer.
  PathSource path_source;
  // Set: the GRH on or off in every plan entry (ComposeOptions::grh: the
  // pingpong dialect's convention).
  std::optional<bool> grh;
  // Each exchanger call (Exchange, Barrier) gets this deadline.
  std::chrono::milliseconds timeout{30000};
  // Refuse when the validator reports an error (kIncompatible, peer aborted).
  // false: connect anyway; the findings are then appended to a refusal.
  bool validate = true;
  // The barrier stage both sides announce after RTS; empty: no barrier.
  std::string barrier_stage = "rts";
  // Called as each phase starts and ends, with a one-line human summary
  // ("received the peer's description: hostB mlx5_0"). May be empty.
  std::function<void(ConnectPhase phase, std::string_view what)> on_step;
  // Called after each QP's RTR and RTS ("rtr"/"rts", done, total). May be
  // empty (owning mode: the session's own on_progress is used then).
  verbs::ProgressFn on_progress;
  // Called after the validation gate, right before the GID table is read
  // again and the QPs move to RTR. Tests widen that window with it
  // (qp-connect's QPC_TEST_PAUSE_BEFORE_RTR_MS). May be empty.
  std::function<void()> before_rtr;
};

// Adopted mode: one QP the caller created and keeps owning.
struct AdoptedQp {
  ibv_qp* qp = nullptr;            // REQUIRES: in RESET or INIT, of the common type
  std::optional<MrDescriptor> mr;  // published to the peer with this QP (RC/UC)
};

// Adopted mode: how to describe the caller's QPs. The description's options
// are embedded, verbs::DescribeOptions' own fields (port, GID, P_Key index,
// used when a QP is moved RESET->INIT here, Q_Key, SL, GRH, MTU, RDMA read
// depths, host) but its transport: the adopted QPs' type decides that.
struct AdoptOptions : verbs::DescribeOptions {
  AdoptOptions() { qkey = verbs::kDefaultQkey; }  // UD (a bare DescribeOptions has 0)

  std::optional<uint32_t> psn;  // first QP's send PSN (others +1 each); random if unset
  // Access flags set at RESET->INIT for QPs adopted in RESET (RC default:
  // local write, remote write, remote read; UC: local and remote write).
  std::optional<unsigned> access_flags;
  // The hardware seam (verbs/qp_control.h) the adopted QPs' transitions, the
  // description and the UD address handles go through; null:
  // verbs::QpEnv::Default(). Unit tests pass fakes (tests/fakes/fake_qp.h).
  // Not owned; REQUIRES: it outlives the Connector.
  verbs::QpEnv* qp_env = nullptr;

 private:
  using verbs::DescribeOptions::transport;  // the adopted QPs' type
};

class Connector {
 public:
  // Owning mode: opens the device and port, creates N QPs with their CQs and
  // buffers, moves them to INIT and posts receives (verbs::Session::Open).
  // kNotFound (device, port, GID, P_Key), kInvalidArgument, kVerbs, kIo.
  static Result<std::unique_ptr<Connector>> Open(const verbs::SessionOptions& options);

  // Adopted mode: describes `qps` (at least one, all of one type: RC, UC or
  // UD, all on one device) on `options.port` and moves those in RESET to INIT
  // (port, P_Key index, access flags or Q_Key). QPs already in INIT are taken
  // as they are: their port must be `options.port`. The caller may post
  // receives before Connect(); it must before the barrier. Nothing is owned
  // but the UD address handles Connect() creates. kInvalidArgument (no QP, a
  // null QP, mixed types, a QP past INIT, an unsupported type), kNotFound
  // (port, GID, P_Key), kVerbs.
  // REQUIRES: the QPs outlive the Connector.
  static Result<std::unique_ptr<Connector>> Adopt(std::vector<AdoptedQp> qps,
                                                  const AdoptOptions& options);

  ~Connector();
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // What this side publishes (valid from construction on).
  const EndpointInfo& Local() const;

  // For flows whose exchange is not an Exchanger (the mesh, the stock
  // pingpong dialect), the composer's steps one by one (composer.h):
  // Prepare() before Local() is published (the joint GID choice joined, the
  // netdevs published); Agree() once the peer's description arrived (the
  // joint GID pair written into Local() and the report's remote, the path,
  // the plan, the validator: the report holds them; errors: the path
  // source's); ConnectAgreed() then refuses on an error finding
  // (kIncompatible, unless options.validate is false) or differing QP
  // counts (kIncompatible, attribute "qps"), reads the chosen GID again and
  // moves every QP INIT->RTR->RTS (kVerbs). They tell no peer anything: the
  // caller does. Connect() runs the same steps around its exchange.
  void Prepare();
  Result<void> Agree(const EndpointInfo& remote, const ConnectorOptions& options,
                     std::vector<Gid> oob_addresses = {});
  Result<void> ConnectAgreed(const ConnectorOptions& options);

  Transport transport() const;
  size_t num_qps() const;
  // The i-th QP (owned by the Connector in owning mode, by the caller when
  // adopted). REQUIRES: i < num_qps().
  ibv_qp* qp(size_t i) const;
  // UD after Connect(): the address handle, remote QPN and Q_Key to put in
  // the send WR of QP i. nullptr / 0 before, or on RC/UC.
  ibv_ah* ah(size_t i) const;
  uint32_t remote_qpn(size_t i) const;
  uint32_t remote_qkey() const;
  // Owning mode: the session (buffers, post/poll helpers); nullptr if adopted.
  verbs::Session* session();

  // The flow: Prepare -> Exchange -> Agree (joint GID choice, path,
  // PlanConnection, Validate) -> gate -> GID read again -> RTR/RTS ->
  // Barrier (composer.h). Returns the report on success. Errors:
  //   the exchanger's (kTimeout, kProtocol, kIncompatible, kAuth, kIo)
  //   kIncompatible  validation refused (findings in report()), the QP
  //                  counts differ, or the chosen GID changed before RTR
  //                  (gid-changed-before-rtr, attribute "sgid_index");
  //                  the peer is told (Abort)
  //   kVerbs         a transition or address handle was refused (the refusal
  //                  names transition, mask, values, cause and the findings);
  //                  the peer is told
  //   kInvalidArgument  Connect() called twice
  // The report (report()) holds what was learned even on failure.
  Result<ConnectReport> Connect(Exchanger& exchanger, const ConnectorOptions& options);

  // Pool mode (owning only): every QP back to INIT with fresh PSNs
  // (verbs::Session::Recycle), so that Connect() may be called again, with a
  // new peer over a new exchanger, without destroying and creating the QPs.
  // The report starts over: Local() keeps the QPNs, timings.open is the
  // recycle and timings.init its INIT. kInvalidArgument when adopted, kVerbs.
  // REQUIRES: the traffic of the old connection is over on both sides.
  Result<void> Recycle();

  // The report of the last Connect(), as far as it got.
  const ConnectReport& report() const;

  // Before a traffic proof over the connection Connect() made: its witness
  // (verbs/proof_witness.h) over QP 0, this side's port and, on RoCE v2, the
  // path between the two GIDs in use, read through this connector's QpEnv.
  // REQUIRES: Connect() succeeded.
  verbs::ProofWitness BeginProof() const;

 private:
  class Impl;
  explicit Connector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qpconnect
