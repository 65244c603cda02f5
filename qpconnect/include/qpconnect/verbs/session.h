// SPDX-License-Identifier: MIT
// A Session owns everything one side needs to connect N QPs of one transport
// on one port: the device context, PD, CQs, QPs, one registered buffer and
// (UD) the address handles; and it describes itself as an EndpointInfo.
//
// Lifecycle, which is the connector's order of operations:
//   Open()    creates the QPs, moves them RESET->INIT and posts receives, so
//             that nothing the peer sends after our RTR can meet an empty RQ;
//   Local()   is then what to publish to the peer;
//   Connect() moves every QP INIT->RTR->RTS with a ConnectionPlan (and builds
//             UD address handles). The caller runs the exchanger's barrier
//             before the first send.
// Every verbs object is released by the destructor, on every path.
//
// Thread-safety: one thread at a time.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/gid_select.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/resources.h"
#include "qpconnect/verbs/session_layout.h"

namespace qpconnect::verbs {

constexpr uint32_t kUdGrhBytes = 40;           // UD receives carry the GRH first
constexpr uint32_t kDefaultQkey = 0x11111111;  // the pingpong examples' Q_Key

// ProgressFn, QpStepTimes and SummarizeQpStep: verbs/qp_steps.h.

// Where Open() and Connect() spent their time.
struct SessionTimings {
  std::chrono::nanoseconds setup{0};    // device, port, GID, PD, CQs, buffer and MR
  QpStepTimes create;                   // ibv_create_qp, per QP
  QpStepTimes init;                     // RESET->INIT and the receives posted, per QP
  QpStepTimes rtr;                      // INIT->RTR (UD: and the address handle), per QP
  QpStepTimes rts;                      // RTR->RTS, per QP
  std::chrono::nanoseconds recycle{0};  // the last Recycle(), whole (its INIT is in `init`)
};

// The description's options (transport, port, GID, P_Key, Q_Key, SL, GRH,
// MTU, RDMA read depths, host) are embedded, DescribeOptions' own fields
// (verbs/describe.h); Open() describes with them as they are.
struct SessionOptions : DescribeOptions {
  SessionOptions() { qkey = kDefaultQkey; }  // UD (a bare DescribeOptions has 0)

  std::string device;  // empty: the first device
  uint32_t num_qps = 1;
  uint32_t message_size = 4096;
  uint32_t rx_depth = 8;        // receives posted per QP
  std::optional<uint32_t> psn;  // first QP's send PSN (others +1 each); random if unset
  // Every QP's buffer areas at the same place (session_layout.h): for
  // traffic with one message in flight at a time across all QPs, as
  // RunTraffic (verbs/traffic.h) runs it; memory and CQ depths then do not
  // grow with num_qps. false: each QP its own areas, for any traffic.
  bool shared_buffers = false;
  // Completion events (perftest -e): the CQs get a completion channel, and
  // waits on them (verbs/completion.h, CompletionWait::channel) sleep until an
  // event instead of polling with back-off.
  bool completion_events = false;
  // Called after each QP is created and moved to INIT (and, in Connect(),
  // after each RTR and RTS). May be empty.
  ProgressFn on_progress;
  // A provider cache file (verbs/provider_cache.h): the providers it names
  // are loaded before the device list, and the one that serves the device
  // is remembered in it, so that the next process opens faster. Empty: none
  // (libibverbs loads every provider, as usual). qp-connect passes
  // DefaultProviderCachePath() unless QPC_PROVIDER_CACHE says otherwise.
  std::string provider_cache;
  // The hardware seam (verbs/qp_control.h) every QP transition and the
  // description go through; null: QpEnv::Default(). Not owned; REQUIRES: it
  // outlives the Session.
  QpEnv* qp_env = nullptr;
};

// What Open() learnt and did about the device's provider library.
struct ProviderNote {
  std::string library;     // the provider serving the device; empty if unknown
  bool preloaded = false;  // `library` was loaded from the cache before the device list
  std::vector<std::string>
      refused;              // cache entries not loaded (not a provider path, dlopen failed)
  std::string cache_error;  // why the cache was not updated; empty if it was or needed not be
};

class Session {
 public:
  // Opens the device and port, creates N QPs with their buffers, moves them to
  // INIT and posts receives. kNotFound (device, port, GID, P_Key),
  // kInvalidArgument (options), kVerbs (any verbs call, errno kept).
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const EndpointInfo& Local() const { return local_; }
  const SessionOptions& options() const { return options_; }
  Transport transport() const { return options_.transport; }
  size_t num_qps() const { return qps_.size(); }
  // The i-th QP (owned by the Session). REQUIRES: i < num_qps().
  ibv_qp* qp(size_t i) const { return qps_.at(i).get(); }
  // After Connect() on UD: QP i's address handle and remote QPN, and the
  // Q_Key put in send WRs; nullptr / 0 before, or on RC/UC.
  ibv_ah* ah(size_t i) const { return i < ahs_.size() ? ahs_[i].get() : nullptr; }
  uint32_t remote_qpn(size_t i) const { return i < remote_qpns_.size() ? remote_qpns_[i] : 0; }
  uint32_t send_qkey() const { return send_qkey_; }
  // Time spent so far by Open() and Connect(), per step.
  const SessionTimings& timings() const { return timings_; }
  // The device's provider library, and whether the provider cache helped.
  const ProviderNote& provider() const { return provider_; }

  // INIT->RTR->RTS for every QP with `plan` (REQUIRES plan.qps.size() ==
  // num_qps()); UD: creates one address handle per peer QP, and sends will
  // carry UdSendQkey(plan) (our own Q_Key unless the plan overrides it; not
  // the peer's: a mismatch must show, as the validator predicts). `remote` is
  // kept for messages. A refusal names the transition, mask and every value
  // (verbs/transition.h), with `hint` appended.
  // `progress` (default: options().on_progress) is told after each RTR and RTS.
  Result<void> Connect(const ConnectionPlan& plan, const EndpointInfo& remote,
                       const std::string& hint = {}, const ProgressFn& progress = {});

  // The QPs' controls and their PD, as the composer moves them
  // (qpconnect/composer.h's QpSet), and what moving them to `plan` made:
  // Connected() keeps the remote QPNs, the UD address handles and Q_Key
  // (as Connect() does) and the RTR/RTS times.
  std::span<QpControl* const> controls() const { return control_ptrs_; }
  ibv_pd& pd() const { return *pd_; }
  void Connected(const ConnectionPlan& plan, PeerHandles peer, const ConnectTimes& times);

  // Pool mode: takes every QP back to INIT for a new peer instead of
  // destroying it (any state -> RESET -> INIT, receives posted again), with
  // fresh PSNs: Local() then describes the same QPNs and MRs for the next
  // Connect(). Completions left in the CQs are discarded and UD address
  // handles released. kVerbs. REQUIRES: nothing of the old connection is
  // still posted or expected.
  Result<void> Recycle();

  // ---- data path (used by traffic.cc) ----
  // Buffer areas of QP i, each message_size bytes (recv slots: + GRH on UD).
  uint8_t* SendArea(size_t i);
  uint8_t* RecvSlot(size_t i, uint32_t slot);
  // The MR descriptor a QP publishes covers [RdmaTarget][RdmaSource], each
  // message_size bytes: the peer writes into the first half, reads the second.
  uint8_t* RdmaTarget(size_t i);
  uint8_t* RdmaSource(size_t i);
  uint8_t* ReadBack(size_t i);     // our RDMA READ lands here
  uint32_t RecvSlotBytes() const;  // message_size (+40 on UD)

  Result<void> PostRecv(size_t i, uint32_t slot);
  // Receives into slots [0, rx_depth) of QP i, in one chained post.
  Result<void> PostAllRecvs(size_t i);
  // SEND of `length` bytes from SendArea(i), signaled; wr_id = i. With `imm`:
  // SEND_WITH_IMM carrying it (the receiver's completion has IBV_WC_WITH_IMM
  // and the value in network byte order).
  Result<void> PostSend(size_t i, uint32_t length, std::optional<uint32_t> imm = std::nullopt);
  // RDMA WRITE from SendArea(i) or RDMA READ into ReadBack(i), signaled.
  Result<void> PostRdma(size_t i, ibv_wr_opcode opcode, uint32_t length, uint64_t remote_addr,
                        uint32_t rkey);
  ibv_cq& SendCq() { return *send_cq_; }
  ibv_cq& RecvCq() { return *recv_cq_; }
  // Both CQs' completion channel (non-blocking fd) with completion_events;
  // nullptr without.
  ibv_comp_channel* CompChannel() const { return channel_.get(); }

 private:
  Session() = default;
  Result<void> CreateResources();
  Result<void> MoveToInit();

  struct BufferFree {
    void operator()(uint8_t* p) const noexcept;
  };

  SessionOptions options_;
  EndpointInfo local_;
  SessionLayout layout_;
  SessionTimings timings_;
  ProviderNote provider_;
  uint32_t send_qkey_ = 0;
  std::vector<uint32_t> remote_qpns_;
  // Members in creation order: destroyed in reverse (AHs, MR, QPs, CQs, PD,
  // context, then the buffer the MR covered).
  std::unique_ptr<uint8_t, BufferFree> buffer_;
  UniqueContext ctx_;
  UniquePd pd_;
  UniqueCompChannel channel_;  // destroyed after the CQs it serves
  UniqueCq send_cq_;
  UniqueCq recv_cq_;
  std::vector<UniqueQp> qps_;
  // One control per QP (options_.qp_env's), as the transition path takes them.
  std::vector<std::unique_ptr<QpControl>> controls_;
  std::vector<QpControl*> control_ptrs_;
  UniqueMr mr_;
  std::vector<UniqueAh> ahs_;
};

}  // namespace qpconnect::verbs
