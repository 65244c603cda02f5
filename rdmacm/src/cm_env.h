// SPDX-License-Identifier: MIT
// The connection manager's environment: the seams through which cm.cc and
// cm_machine.cc reach the world, so that the whole flow runs in a unit test
// (tests/unit/rdmacm/cm_table_test.cc) without verbs, sockets, the engine
// thread or real time, as qpconnect/verbs/qp_control.h's QpEnv does for the
// connector.
//
//   CmQp    the id's QP side: describe, plan and validate, RTR, RTS, ERROR
//           (the library's: qp.h's functions);
//   CmLink  a link (cm_link.h; the library's: link.h's Link);
//   CmClock Now();
//   CmHost  the engine thread's services: dial a link, run the sweep soon,
//           run a function later, place a local address (the library's:
//           Link::Dial, a steady_timer, address.h's PlaceAddress).
// Events go to the id's channel through events.h's PostEvent, where a test
// reads them as a program would.
//
// The library's environment (cm_default.cc) is made once and never freed;
// it holds no state, so a call through it costs one indirect call.
//
// Thread-safety: every call REQUIRES library_mutex held, as cm.h's functions do.
#pragma once

#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "address.h"
#include "cm_link.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "state.h"

namespace qpconnect::rdmacm {

class CmQp {
 public:
  virtual ~CmQp() = default;
  // qp.h's DescribeSide: id->local, id->described and id->psn.
  virtual Result<void> Describe(Id* id) QPCM_REQUIRES(library_mutex) = 0;
  // qp.h's PlanAndValidate: id->plan, or kIncompatible naming the findings.
  virtual Result<void> PlanAndValidate(Id* id, bool active, std::vector<Gid> link_ends)
      QPCM_REQUIRES(library_mutex) = 0;
  // qp.h's QpConnect (the composer's apply): the chosen GID read again,
  // then RTR and RTS. kIncompatible with IsGidChanged() (composer.h) when
  // the GID changed: nothing modified, a verdict of the validator's kind;
  // otherwise the error names transition, mask and values.
  virtual Result<void> Connect(Id* id) QPCM_REQUIRES(library_mutex) = 0;
  // qp.h's SetQpEce: the id's QP set to `ece` (ibv_set_ece) before RTR; ok
  // without a QP or where the provider has no ECE.
  virtual Result<void> SetEce(Id* id, const Ece& ece) QPCM_REQUIRES(library_mutex) = 0;
  // qp.h's QpToError: no-op without a QP.
  virtual void ToError(Id* id) QPCM_REQUIRES(library_mutex) = 0;
  // qp.h's PeerAh: the UD peer's address handle attributes, from the plan.
  virtual ibv_ah_attr PeerAh(const Id* id) QPCM_REQUIRES(library_mutex) = 0;
};

class CmClock {
 public:
  virtual ~CmClock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
};

class CmHost {
 public:
  virtual ~CmHost() = default;
  // A link from `source` to `peer` (link.h's Link::Dial: a live one is reused).
  virtual std::shared_ptr<CmLink> Dial(const sockaddr* peer, const sockaddr* source,
                                       std::chrono::milliseconds timeout)
      QPCM_REQUIRES(library_mutex) = 0;
  // Runs cm.h's sweep (Sweep(env), under library_mutex) in a short while, once
  // however often it is asked before it runs.
  virtual void ArmSweep() = 0;
  // Runs `fn` after `delay` (without library_mutex: fn takes it).
  virtual void After(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  // address.h's PlaceAddress: which device serves a local address.
  virtual Result<Placement> Place(const sockaddr* addr) QPCM_REQUIRES(library_mutex) = 0;
};

struct CmEnv {
  CmQp& qp;
  CmClock& clock;
  CmHost& host;
  // How long a REQ, REP or DREQ waits for its answer (QPCM_TIMEOUT_MS).
  std::chrono::milliseconds answer_timeout;
};

}  // namespace qpconnect::rdmacm
