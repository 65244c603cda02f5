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
// The first call also starts the engine thread (link.h), so that the first
// dial finds it running.
//
// Thread-safety: any thread; the work runs once per process.
#pragma once

#include "qpconnect/endpoint.h"

namespace qpconnect::rdmacm {

void WarmUpOnce();

// The first port this process describes (devices.h Describe): once the
// made-up pair is done, the warm-up thread runs the same code over it (the
// port as its own peer), waiting up to 30 s for it. Later calls do nothing.
void WarmUpWith(const EndpointInfo& port);

}  // namespace qpconnect::rdmacm
