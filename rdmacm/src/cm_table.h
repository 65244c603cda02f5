// SPDX-License-Identifier: MIT
// The connection manager's state machine as data: for an id in one state
// (state.h's IdState) and one input, the state it goes to and the action that
// happens on the way, in the shape of the kernel's cma_comp_exch moves and of
// qpconnect/verbs/qp_state_table.h. cm_machine.h's Transition() is the one
// function that looks a row up, runs its action and writes id->state.
//
// The inputs are everything that moves an id: the program's calls, the
// peer's messages, the link's failures, the sweep's deadlines and the local
// verdicts an action reaches on its way (the peer's description does not
// decode, the validator refuses the pair, the device refuses RTR or RTS).
// Some are split where the same event means two different moves: a REP for
// an id with its QP, for an id whose program brings its own QP (it gets
// CONNECT_RESPONSE) and for a UD id (SIDR); rdma_accept and rdma_disconnect
// on a UD id.
//
// A (state, input) pair without a row changes nothing: a call fails with
// EINVAL ("rdma_connect: the id is listening, not route resolved"); any other
// input is ignored (a REP for an id that gave up, a second DREP). Every row's
// action, and the failure ritual each kFail* action stands for, is in
// cm_machine.cc; docs/rdmacm.md shows the table (cm_table_test checks the doc
// against this data).
//
// Thread-safety: constant data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "state.h"

namespace qpconnect::rdmacm {

enum class CmInput : uint8_t {
  // The program's calls.
  kBind,
  kResolveAddr,
  kResolveRoute,
  kListen,
  kConnect,
  kAccept,
  kAcceptUd,
  kReject,
  kDisconnect,
  kDisconnectUd,
  kEstablish,
  kDestroy,
  // The peer's messages.
  kReq,
  kRep,      // for an id with its QP
  kRepNoQp,  // for an id whose program moves its own QP
  kSidrRep,  // for a UD id
  kRej,
  kRtu,
  kDreq,
  kDrep,
  kMra,
  // The link (link.h's LinkFailure kinds).
  kLinkRefused,
  kLinkDropped,  // closed by the peer, or an I/O error
  kLinkTimedOut,
  kLinkProtocol,
  // The sweep: a deadline passed, the peer silent or still talking (overdue.h).
  kDeadline,
  kPeerTalking,
  // The local verdicts an action reaches.
  kBadDescription,
  kValidatorRefused,
  kDeviceRefused,
};
inline constexpr size_t kCmInputCount = 30;
inline constexpr size_t kIdStateCount = 12;

// True for the program's calls: a pair without a row fails with EINVAL.
constexpr bool IsCall(CmInput in) { return in <= CmInput::kDestroy; }

enum class CmAction : uint8_t {
  kNothing,                      // the state alone
  kLetGo,                        // the id lets go of its link
  kPostAddrResolved,             // ADDR_RESOLVED
  kPostRouteResolved,            // ROUTE_RESOLVED
  kDialAndSendReq,               // describe, dial, REQ; the reply's deadline
  kPostConnectRequest,           // CONNECT_REQUEST; MRAs while the program holds it
  kValidateMoveSendRep,          // describe, validate, RTR, RTS, REP; the RTU's deadline
  kValidateSendSidrRep,          // describe, validate, SIDR REP; let go of the link
  kValidateMoveSendRtu,          // validate, RTR, RTS, RTU, ESTABLISHED
  kValidatePostResponse,         // validate, CONNECT_RESPONSE
  kValidatePostSidrEstablished,  // validate, ESTABLISHED with param.ud; let go
  kSendRtu,                      // RTU
  kPostEstablished,              // ESTABLISHED
  kExtendDeadline,               // the reply's deadline extended (up to kMraBound)
  kWaitOn,                       // the deadline moved to the peer's silence
  kSendMra,                      // MRA (one per link per sweep)
  kSendDreq,                     // QP to ERROR, DREQ; the DREP's deadline
  kQpToError,                    // QP to ERROR
  kPostDisconnectedOnDreq,       // DISCONNECTED; the DREP waits for rdma_disconnect
  kSendDrepPostDisconnected,     // DREP, DISCONNECTED, let go (DREQs crossed)
  kPostDisconnectedOnDrep,       // DISCONNECTED, let go
  kPostDisconnected,             // DISCONNECTED
  kGiveUpOnDrep,                 // DISCONNECTED without the DREP, let go
  kSendDrepIfAsked,              // QP to ERROR; DREP if the peer asked, let go
  kDestroySendDreq,              // DREQ (RC), let go
  kDestroyRejectRequest,         // REJ 28, let go
  kDestroySendDrepIfAsked,       // DREP if the peer asked, let go
  kRefuseGone,                   // the call fails with ECONNRESET
  // The failure ritual (cm_machine.cc's Fail), each with what kCmFailures says.
  kFailNoListener,
  kFailTimedOut,
  kFailTimedOutQp,
  kFailProtocol,
  kFailReset,
  kFailResetQp,
  kFailQuietly,
  kFailPeerRejected,
  kFailBadReply,
  kFailValidator,
  kFailDeviceActive,
  kFailDevicePassive,
  kFailProgramReject,
};
inline constexpr size_t kCmActionCount = 41;

struct CmRow {
  IdState state;
  CmInput input;
  IdState next;
  CmAction action;
};

namespace cm_rows {
using enum IdState;
using enum CmInput;
using enum CmAction;

// clang-format off
// In the order of a connection's life; within a state, in CmInput's order.
inline constexpr CmRow kRows[] = {
  {kIdle,          kBind,              kBound,          kNothing},
  {kIdle,          kResolveAddr,       kAddrResolved,   kPostAddrResolved},
  {kIdle,          kListen,            kListening,      kNothing},
  {kIdle,          kDestroy,           kIdle,           kLetGo},
  {kIdle,          kReq,               kRequest,        kPostConnectRequest},

  {kBound,         kResolveAddr,       kAddrResolved,   kPostAddrResolved},
  {kBound,         kListen,            kListening,      kNothing},
  {kBound,         kDestroy,           kIdle,           kLetGo},

  {kAddrResolved,  kResolveRoute,      kRouteResolved,  kPostRouteResolved},
  {kAddrResolved,  kConnect,           kConnecting,     kDialAndSendReq},
  {kAddrResolved,  kDestroy,           kIdle,           kLetGo},

  {kRouteResolved, kConnect,           kConnecting,     kDialAndSendReq},
  {kRouteResolved, kDestroy,           kIdle,           kLetGo},

  {kListening,     kListen,            kListening,      kNothing},
  {kListening,     kDestroy,           kIdle,           kLetGo},

  {kConnecting,    kDestroy,           kIdle,           kLetGo},
  {kConnecting,    kRep,               kEstablished,    kValidateMoveSendRtu},
  {kConnecting,    kRepNoQp,           kResponse,       kValidatePostResponse},
  {kConnecting,    kSidrRep,           kEstablished,    kValidatePostSidrEstablished},
  {kConnecting,    kRej,               kFailed,         kFailPeerRejected},
  {kConnecting,    kMra,               kConnecting,     kExtendDeadline},
  {kConnecting,    kLinkRefused,       kFailed,         kFailNoListener},
  {kConnecting,    kLinkDropped,       kFailed,         kFailReset},
  {kConnecting,    kLinkTimedOut,      kFailed,         kFailTimedOut},
  {kConnecting,    kLinkProtocol,      kFailed,         kFailProtocol},
  {kConnecting,    kDeadline,          kFailed,         kFailTimedOut},
  {kConnecting,    kPeerTalking,       kConnecting,     kWaitOn},
  {kConnecting,    kBadDescription,    kFailed,         kFailBadReply},
  {kConnecting,    kValidatorRefused,  kFailed,         kFailValidator},
  {kConnecting,    kDeviceRefused,     kFailed,         kFailDeviceActive},

  {kResponse,      kReject,            kFailed,         kFailProgramReject},
  {kResponse,      kDisconnect,        kDisconnected,   kSendDreq},
  {kResponse,      kEstablish,         kEstablished,    kSendRtu},
  {kResponse,      kDestroy,           kIdle,           kDestroySendDreq},
  {kResponse,      kRej,               kFailed,         kFailPeerRejected},
  {kResponse,      kDreq,              kDisconnected,   kPostDisconnectedOnDreq},
  {kResponse,      kLinkRefused,       kDisconnected,   kPostDisconnected},
  {kResponse,      kLinkDropped,       kDisconnected,   kPostDisconnected},
  {kResponse,      kLinkTimedOut,      kDisconnected,   kPostDisconnected},
  {kResponse,      kLinkProtocol,      kDisconnected,   kPostDisconnected},

  {kRequest,       kAccept,            kAccepted,       kValidateMoveSendRep},
  {kRequest,       kAcceptUd,          kEstablished,    kValidateSendSidrRep},
  {kRequest,       kReject,            kFailed,         kFailProgramReject},
  {kRequest,       kDestroy,           kIdle,           kDestroyRejectRequest},
  {kRequest,       kRej,               kFailed,         kFailPeerRejected},
  {kRequest,       kLinkRefused,       kFailed,         kFailQuietly},
  {kRequest,       kLinkDropped,       kFailed,         kFailQuietly},
  {kRequest,       kLinkTimedOut,      kFailed,         kFailQuietly},
  {kRequest,       kLinkProtocol,      kFailed,         kFailQuietly},
  {kRequest,       kDeadline,          kRequest,        kSendMra},
  {kRequest,       kValidatorRefused,  kFailed,         kFailValidator},
  {kRequest,       kDeviceRefused,     kFailed,         kFailDevicePassive},

  {kAccepted,      kDisconnect,        kDisconnected,   kSendDreq},
  {kAccepted,      kDestroy,           kIdle,           kDestroySendDreq},
  {kAccepted,      kRej,               kFailed,         kFailPeerRejected},
  {kAccepted,      kRtu,               kEstablished,    kPostEstablished},
  {kAccepted,      kDreq,              kDisconnected,   kPostDisconnectedOnDreq},
  {kAccepted,      kLinkRefused,       kFailed,         kFailResetQp},
  {kAccepted,      kLinkDropped,       kFailed,         kFailResetQp},
  {kAccepted,      kLinkTimedOut,      kFailed,         kFailResetQp},
  {kAccepted,      kLinkProtocol,      kFailed,         kFailResetQp},
  {kAccepted,      kDeadline,          kFailed,         kFailTimedOutQp},
  {kAccepted,      kPeerTalking,       kAccepted,       kWaitOn},

  {kEstablished,   kDisconnect,        kDisconnected,   kSendDreq},
  {kEstablished,   kDisconnectUd,      kEstablished,    kQpToError},
  {kEstablished,   kDestroy,           kIdle,           kDestroySendDreq},
  {kEstablished,   kDreq,              kDisconnected,   kPostDisconnectedOnDreq},
  {kEstablished,   kLinkRefused,       kDisconnected,   kPostDisconnected},
  {kEstablished,   kLinkDropped,       kDisconnected,   kPostDisconnected},
  {kEstablished,   kLinkTimedOut,      kDisconnected,   kPostDisconnected},
  {kEstablished,   kLinkProtocol,      kDisconnected,   kPostDisconnected},

  {kDisconnected,  kDisconnect,        kDisconnected,   kSendDrepIfAsked},
  {kDisconnected,  kDestroy,           kIdle,           kDestroySendDrepIfAsked},
  {kDisconnected,  kDreq,              kDisconnected,   kSendDrepPostDisconnected},
  {kDisconnected,  kDrep,              kDisconnected,   kPostDisconnectedOnDrep},
  {kDisconnected,  kLinkRefused,       kDisconnected,   kPostDisconnected},
  {kDisconnected,  kLinkDropped,       kDisconnected,   kPostDisconnected},
  {kDisconnected,  kLinkTimedOut,      kDisconnected,   kPostDisconnected},
  {kDisconnected,  kLinkProtocol,      kDisconnected,   kPostDisconnected},
  {kDisconnected,  kDeadline,          kDisconnected,   kGiveUpOnDrep},

  {kFailed,        kAccept,            kFailed,         kRefuseGone},
  {kFailed,        kAcceptUd,          kFailed,         kRefuseGone},
  {kFailed,        kDestroy,           kIdle,           kLetGo},
};
// clang-format on

}  // namespace cm_rows

inline constexpr const auto& kCmTable = cm_rows::kRows;
inline constexpr size_t kCmRowCount = sizeof(cm_rows::kRows) / sizeof(CmRow);

// What the failure ritual does for each kFail* action: the QP to ERROR first
// or not, what the peer is told (a REJ), what the program is told (an event,
// or the call's return), always after the id lets go of its link; the row
// marks the id failed.
enum class CmTellPeer : uint8_t {
  kNothing,
  kValidatorRefused,  // REJ 28 "refused by the validator: ..."
  kBadDescription,    // REJ 28 "your description does not decode"
  kActiveQpRefused,   // REJ 28 "the active side's QP was refused: <transition>"
  kPassiveQpRefused,  // REJ 28 "the passive side's QP was refused: <transition>"
  kProgramRejects,    // REJ 28 (rdma_reject_ece: 35) with the program's private data
};
enum class CmTellProgram : uint8_t {
  kNothing,
  kNoListener,    // REJECTED 8 (UD: UNREACHABLE 1, SIDR "unsupported")
  kPeerRejected,  // REJECTED with the REJ's reason and private data (UD: UNREACHABLE 1 or 2)
  kRejected,      // REJECTED 28
  kTimedOut,      // UNREACHABLE -ETIMEDOUT
  kProtocol,      // UNREACHABLE -EPROTO
  kReset,         // UNREACHABLE -ECONNRESET
  kConnectError,  // CONNECT_ERROR -errno of the device's refusal
  kCallFails,     // no event: the call fails with the device's errno
};
struct CmFailure {
  CmAction action;
  bool qp_to_error;
  CmTellPeer peer;
  CmTellProgram program;
};

namespace cm_rows {
using A = CmAction;
using P = CmTellPeer;
using G = CmTellProgram;
// clang-format off
inline constexpr CmFailure kFailureRows[] = {
  //                         QP to ERROR  the peer               the program
  {A::kFailNoListener,       false,       P::kNothing,           G::kNoListener},
  {A::kFailTimedOut,         false,       P::kNothing,           G::kTimedOut},
  {A::kFailTimedOutQp,       true,        P::kNothing,           G::kTimedOut},
  {A::kFailProtocol,         false,       P::kNothing,           G::kProtocol},
  {A::kFailReset,            false,       P::kNothing,           G::kReset},
  {A::kFailResetQp,          true,        P::kNothing,           G::kReset},
  {A::kFailQuietly,          false,       P::kNothing,           G::kNothing},
  {A::kFailPeerRejected,     true,        P::kNothing,           G::kPeerRejected},
  {A::kFailBadReply,         false,       P::kBadDescription,    G::kProtocol},
  {A::kFailValidator,        false,       P::kValidatorRefused,  G::kRejected},
  {A::kFailDeviceActive,     true,        P::kActiveQpRefused,   G::kConnectError},
  {A::kFailDevicePassive,    true,        P::kPassiveQpRefused,  G::kCallFails},
  {A::kFailProgramReject,    false,       P::kProgramRejects,    G::kNothing},
};
// clang-format on
}  // namespace cm_rows

inline constexpr const auto& kCmFailures = cm_rows::kFailureRows;

constexpr bool IsFailure(CmAction a) { return a >= CmAction::kFailNoListener; }

// The failure ritual of a kFail* action; nullptr for any other action.
constexpr const CmFailure* FindCmFailure(CmAction a) {
  for (const CmFailure& f : kCmFailures)
    if (f.action == a) return &f;
  return nullptr;
}

// The verdicts an action may reach on its way: each needs a row from the
// same state (checked below).
constexpr bool MayReach(CmAction a, CmInput verdict) {
  switch (a) {
    case CmAction::kValidateMoveSendRtu:
      return verdict == CmInput::kBadDescription || verdict == CmInput::kValidatorRefused ||
             verdict == CmInput::kDeviceRefused;
    case CmAction::kValidatePostResponse:
    case CmAction::kValidatePostSidrEstablished:
      return verdict == CmInput::kBadDescription || verdict == CmInput::kValidatorRefused;
    case CmAction::kValidateMoveSendRep:
      return verdict == CmInput::kValidatorRefused || verdict == CmInput::kDeviceRefused;
    case CmAction::kValidateSendSidrRep:
      return verdict == CmInput::kValidatorRefused;
    default:
      return false;
  }
}

namespace cm_index {

struct Index {
  int16_t row[kIdStateCount][kCmInputCount];
};

constexpr Index Build() {
  Index x{};
  for (auto& per_state : x.row)
    for (auto& r : per_state) r = -1;
  for (size_t i = 0; i < kCmRowCount; ++i)
    x.row[static_cast<size_t>(kCmTable[i].state)][static_cast<size_t>(kCmTable[i].input)] =
        static_cast<int16_t>(i);
  return x;
}

constexpr bool NoDuplicates() {
  for (size_t i = 0; i < kCmRowCount; ++i)
    for (size_t j = i + 1; j < kCmRowCount; ++j)
      if (kCmTable[i].state == kCmTable[j].state && kCmTable[i].input == kCmTable[j].input)
        return false;
  return true;
}

constexpr bool InRange() {
  for (const CmRow& r : kCmTable)
    if (static_cast<size_t>(r.state) >= kIdStateCount ||
        static_cast<size_t>(r.next) >= kIdStateCount ||
        static_cast<size_t>(r.input) >= kCmInputCount ||
        static_cast<size_t>(r.action) >= kCmActionCount)
      return false;
  return true;
}

constexpr bool HasRow(IdState s, CmInput in) {
  for (const CmRow& r : kCmTable)
    if (r.state == s && r.input == in) return true;
  return false;
}

// Every verdict an action may reach has a row from the action's state, and
// every failure action has its ritual.
constexpr bool VerdictsAndFailuresComplete() {
  for (const CmRow& r : kCmTable) {
    for (CmInput v :
         {CmInput::kBadDescription, CmInput::kValidatorRefused, CmInput::kDeviceRefused})
      if (MayReach(r.action, v) && !HasRow(r.state, v)) return false;
    if (IsFailure(r.action) && FindCmFailure(r.action) == nullptr) return false;
    if (IsFailure(r.action) && r.next != IdState::kFailed) return false;
  }
  return true;
}

inline constexpr Index kIndex = Build();

}  // namespace cm_index

static_assert(static_cast<size_t>(CmInput::kDeviceRefused) + 1 == kCmInputCount);
static_assert(static_cast<size_t>(IdState::kFailed) + 1 == kIdStateCount);
static_assert(static_cast<size_t>(CmAction::kFailProgramReject) + 1 == kCmActionCount);
static_assert(cm_index::InRange(), "a row names a state, input or action out of range");
static_assert(cm_index::NoDuplicates(), "two rows for one (state, input) pair");
static_assert(cm_index::VerdictsAndFailuresComplete(),
              "an action's verdict without a row, or a failure without its ritual");

// The row for `in` in state `s`; nullptr when there is none.
constexpr const CmRow* FindCmRow(IdState s, CmInput in) {
  int16_t r = cm_index::kIndex.row[static_cast<size_t>(s)][static_cast<size_t>(in)];
  return r < 0 ? nullptr : &kCmTable[static_cast<size_t>(r)];
}

// Names, for logs and for docs/rdmacm.md's table.
std::string_view CmInputName(CmInput in);
std::string_view CmActionName(CmAction a);
// What an action does, in a few words (docs/rdmacm.md's last column).
std::string_view CmActionText(CmAction a);

}  // namespace qpconnect::rdmacm
