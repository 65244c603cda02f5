// SPDX-License-Identifier: MIT
// The first connection's one-time costs, paid early and off the program's
// and the engine's threads: a connection's code (frame, encoding, joint GID
// choice, plan, validator, RTR/RTS attributes) runs once, on a thread of its
// own, over a made-up port seen as its own peer. Nothing is sent or modified. When: at the first
// rdma_create_id or rdma_listen, while the program resolves addresses and creates QPs. It ran on
// the engine thread before, in steps posted one after another: at N = 1 the active side's REQ then
// waited behind two of those steps (90 ms on a loaded lab host, the QPCM_DEBUG timeline of one
// cmtime connection), and started at rdma_resolve_addr it held the link's connect back by 70 ms.
// The thread stops after its current phase at exit. Under the lab's emulator, which translates code
// the first time it runs, that work is a visible part of a first connection's time; on hardware it
// saves page faults and cold caches.
//
// Then the same rehearsal runs over the first port the process describes
// (WarmUpWith): the real GID table, the joint GID choice and the
// RoCE rules take paths the made-up pair does not. Measured at N = 1
// (cmtime -c 1 through qp-cm, 14 rounds each way alternating in one boot,
// twice): connect step median 32.5 ms with it, 45.3 without; 32.3 and 37.8
// in the second boot (native 16.1 and 15.3).
//
// On the real port the rehearsal then goes down to the device: one RC QP
// (with its completion channels and CQs, as librdmacm makes them for a
// program), moved INIT->RTR->RTS through the composer connected to itself,
// and destroyed: the provider's and libibverbs' code for a QP's creation
// and moves runs once before the first connection needs it (the server's
// first rdma_create_qp took 13 ms against 0.33 ms in steady state,
// docs/bench/cmtime/steps_n1.txt). It lives a few milliseconds; no QP is
// left.
//
// The first call also starts the engine thread (link.h), so that the first
// dial finds it running.
//
// Thread-safety: any thread; the work runs once per process.
#pragma once

#include <infiniband/verbs.h>

#include "qpconnect/endpoint.h"

namespace qpconnect::rdmacm {

void WarmUpOnce();

// The first port this process describes (devices.h Describe), on the device
// `ctx` (null: no device rehearsal): once the made-up pair is done, the
// warm-up thread runs the same code over it (the port as its own peer), then
// a QP's creation and moves on the device, waiting up to 30 s for it. Later
// calls do nothing.
void WarmUpWith(const EndpointInfo& port, ibv_context* ctx);

}  // namespace qpconnect::rdmacm
