// The first connection's one-time costs, paid early and off the program's
// thread: the code that describes, encodes, decodes, plans and validates runs
// once on the engine thread over a made-up pair of endpoints as soon as a
// connection is in sight (rdma_resolve_addr, rdma_listen), while the program
// resolves its route and creates its QP. Nothing is sent or modified. Under
// the lab's emulator, whose cost is translating code the first time it runs,
// that is most of a one-connection cmtime's connect step (docs/rdmacm.md has
// the measurement); on hardware it saves page faults and cold caches.
//
// Thread-safety: any thread; the work runs once per process.
#pragma once

namespace qpconnect::rdmacm {

void WarmUpOnce();

}  // namespace qpconnect::rdmacm
