// The first connection's one-time costs, paid early and off the program's
// thread: the code that describes, encodes, decodes, plans and validates runs
// once on the engine thread over a made-up pair of endpoints as soon as a
// connection is in sight (rdma_resolve_addr, rdma_listen), while the program
// resolves its route and creates its QP. Nothing is sent or modified. Under
// the lab's emulator, which translates code the first time it runs, that
// work is a visible part of a first connection's time; on hardware it saves
// page faults and cold caches. Its effect was not measured apart from the
// other changes of the same commit (docs/rdmacm.md has the benchmark).
//
// Thread-safety: any thread; the work runs once per process.
#pragma once

namespace qpconnect::rdmacm {

void WarmUpOnce();

}  // namespace qpconnect::rdmacm
