// SPDX-License-Identifier: MIT
// `sim` helper: the validator's SA rules against a PathRecord from a real SA.
// Attached to an ibsim HCA (LD_PRELOAD=libumad2sim.so, SIM_HOST), it asks the
// SA for the path to DLID (in PKEY when given), then validates an RC pair of
// InfiniBand endpoints whose ports are active at MTU bytes (tests/unit/validate
// fixtures; the local P_Key is 0xffff) against that path, and prints
// "sa-path mtu=<bytes> pkey=<hex> sl=<n>" and the id of each finding; then
// plans with the path (PlanOptions::sa_path) and prints that plan and any
// SA-rule finding on it ("sa-plan: <id>").
//   sa_validate_sim DLID MTU [PKEY]
// Exit 0 when it printed, 1 when the path query failed, 2 usage.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "qpconnect/sa/path_resolver.h"
#include "qpconnect/sa/umad_channel.h"
#include "qpconnect/validate.h"
#include "unit/validate/fixtures.h"

int main(int argc, char** argv) {
  using namespace qpconnect;
  if (argc < 3) {
    std::fprintf(stderr, "usage: sa_validate_sim DLID MTU [PKEY]\n");
    return 2;
  }
  sa::PathQuery query;
  query.dlid = static_cast<uint16_t>(std::strtoul(argv[1], nullptr, 0));
  const Mtu mtu = MtuFromBytes(std::atoi(argv[2]));
  if (argc > 3) query.pkey = static_cast<uint16_t>(std::strtoul(argv[3], nullptr, 0));
  if (!IsValidMtu(mtu)) {
    std::fprintf(stderr, "bad MTU %s\n", argv[2]);
    return 2;
  }
  auto port = sa::QueryUmadPort("", 0);
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().ToString().c_str());
    return 1;
  }
  auto channel = sa::OpenUmadChannel(*port);
  if (!channel) {
    std::fprintf(stderr, "%s\n", channel.error().ToString().c_str());
    return 1;
  }
  auto path = sa::ResolvePath(**channel, *port, query);
  if (!path) {
    std::fprintf(stderr, "%s\n", path.error().ToString().c_str());
    return 1;
  }
  std::printf("sa-path mtu=%d pkey=0x%04x sl=%u\n", MtuBytes(path->mtu), unsigned{path->pkey},
              unsigned{path->sl});
  test::Pair pair = test::IbPair(Transport::kRc);
  for (EndpointInfo* e : {&pair.local, &pair.remote}) {
    e->port.active_mtu = mtu;
    e->keys.pkey = 0xffff;
  }
  ValidationInput in;
  in.local = &pair.local;
  in.remote = &pair.remote;
  for (const Finding& f : Validate(in, *path)) {
    if (!f.unchecked) std::printf("%s\n", f.id.c_str());
  }
  // The plan built from the SA's path (PlanOptions::sa_path), and what the
  // SA rules say of it ("sa-plan: <id>" lines; none expected).
  PlanOptions options;
  options.sa_path = *path;
  in.local_plan = PlanConnection(pair.local, pair.remote, options);
  const QpAttrs& q = in.local_plan->qps.at(0);
  std::string from;
  for (const auto& name : in.local_plan->from_sa) from += (from.empty() ? "" : ",") + name;
  std::printf("plan-with-sa path_mtu=%d sl=%u timeout=%u dlid=%u from_sa=%s\n",
              MtuBytes(q.path_mtu), unsigned{q.ah.sl}, unsigned{q.timeout}, unsigned{q.ah.dlid},
              from.c_str());
  for (const Finding& f : Validate(in, *path)) {
    if (!f.unchecked && f.id.find("sa-path") != std::string::npos) {
      std::printf("sa-plan: %s\n", f.id.c_str());
    }
  }
  return 0;
}
