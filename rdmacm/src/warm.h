// The first connection's one-time costs, paid early and off the program's
// thread: the code that describes, encodes, decodes, plans and validates runs
// once on the engine thread over a made-up pair of endpoints, in small steps
// (the engine's own work runs between them). Nothing is sent or modified.
// When: on the passive side at rdma_listen, which then idles until a request
// comes; on the active side once its first link has written (Link), while it
// waits for the answer, never before the link is up: a warm-up started at
// rdma_resolve_addr held the link's connect back by 70 ms at N = 1 (the
// QPCM_DEBUG timeline of one cmtime connection). Under the lab's emulator,
// which translates code the first time it runs, that work is a visible part
// of a first connection's time; on hardware it saves page faults and cold
// caches.
//
// Thread-safety: any thread; the work runs once per process.
#pragma once

namespace qpconnect::rdmacm {

void WarmUpOnce();

}  // namespace qpconnect::rdmacm
