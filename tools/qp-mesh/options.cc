// SPDX-License-Identifier: MIT
#include "options.h"

#include <chrono>
#include <sstream>

#include "cli_args.h"
#include "duration_arg.h"
#include "exit_codes.h"
#include "qpconnect/verbs/provider_cache.h"
#include "version.h"

namespace qpconnect::tools {
namespace {

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'d', "ib-dev", true, "NAME", "RDMA device of every rank (default: the first)"},
    {0, "devices", true, "LIST",
     "comma list of devices assigned round-robin by local rank (as NCCL_IB_HCA); "
     "overrides -d"},
    {'i', "ib-port", true, "PORT", "port (default 1)"},
    {'g', "gid-idx", true, "INDEX", "GID index (default: chosen per port, RoCE v2)"},
    {'t', "transport", true, "rc|uc|ud", "transport (default rc; ud: one QP per peer)"},
    {'q', "qps", true, "N", "QPs to every other rank (default 1; rc/uc)"},
    {'m', "mtu", true, "BYTES", "force the path MTU (256..4096; default: min of both ports)"},
    {'n', "iters", true, "N", "ping-pong round trips per edge (default 10)"},
    {'s', "size", true, "BYTES", "message size (default 4096)"},
    {0, "no-verify", false, "", "connect only: no traffic on the edges"},
    {0, "timeout", true, "SECONDS", "per wait of the traffic (default 10; 1..3600)"},
    {0, "json", false, "", "one JSON document per rank on stdout"},
    {'h', "help", false, "", "this text"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// The statuses qp-mesh exits with (exit_codes.h's table).
constexpr ExitCode kExits[] = {kExitOk,         kExitUsage, kExitNoDevice, kExitExchange,
                               kExitValidation, kExitVerbs, kExitTraffic};

constexpr DurationOption kTimeout{"--timeout", std::chrono::seconds(1), std::chrono::hours(1)};

}  // namespace

std::string MeshHelpText() {
  std::ostringstream out;
  out << "Usage: mpirun -np N qp-mesh [OPTIONS]\n"
         "Connects every MPI rank to every other with RDMA QPs (an all-to-all mesh),\n"
         "exchanging the QP descriptions with one MPI collective, validates every\n"
         "pair before any modify, proves every edge with a ping-pong and reports per\n"
         "rank; rank 0 prints a summary of the whole mesh (docs/mesh.md).\n\n"
         "Options:\n"
      << FormatOptions(Specs())
      << "\nDurations are seconds, with a fraction or a unit: 2, 0.5, 500ms, 1m.\n"
         "\n0: every edge connected (and passed traffic) on every rank; a pair that fails\n"
         "validation makes every rank exit 5.\n\n"
      << ExitStatusHelp(kExits);
  return out.str();
}

namespace {

// The devices: -d, or --devices assigned round-robin, and the provider cache.
Result<void> ParseDevices(const ParsedArgs& a, MeshOptions& m) {
  if (auto v = a.Get("ib-dev")) m.session.device = *v;
  // As qp-connect: each rank loads the device's provider first (docs/cli.md).
  if (auto cache = verbs::ProviderCacheFromEnvironment(); !cache) {
    return std::move(cache).error();
  } else {
    m.session.provider_cache = std::move(*cache);
  }
  if (auto v = a.Get("devices")) {
    std::string item;
    std::istringstream in(*v);
    while (std::getline(in, item, ',')) {
      if (item.empty()) {
        return Error(ErrorCode::kInvalidArgument, 0, "qp-mesh", "--devices",
                     "empty name in the device list '" + *v + "'");
      }
      m.devices.push_back(item);
    }
  }
  return Ok();
}

// The QPs to every other rank: port, GID, transport, count, forced MTU.
Result<void> ParseQps(const ParsedArgs& a, MeshOptions& m) {
  if (auto v = a.Get("ib-port")) {
    auto n = ParseUnsigned(*v, "--ib-port", 1, 255);
    if (!n) return std::move(n).error();
    m.session.port = static_cast<uint8_t>(*n);
  }
  if (auto v = a.Get("gid-idx")) {
    auto n = ParseUnsigned(*v, "--gid-idx", 0, kMaxSgidIndex);
    if (!n) return std::move(n).error();
    m.session.gid.index = static_cast<uint16_t>(*n);
  }
  if (auto v = a.Get("transport")) {
    if (*v == "rc") {
      m.session.transport = Transport::kRc;
    } else if (*v == "uc") {
      m.session.transport = Transport::kUc;
    } else if (*v == "ud") {
      m.session.transport = Transport::kUd;
    } else {
      return Error(ErrorCode::kInvalidArgument, 0, "qp-mesh", "--transport",
                   "unknown transport '" + *v + "' (rc, uc or ud)");
    }
  }
  if (auto v = a.Get("qps")) {
    auto n = ParseUnsigned(*v, "--qps", 1, 4096);
    if (!n) return std::move(n).error();
    m.session.num_qps = static_cast<uint32_t>(*n);
  }
  if (auto v = a.Get("mtu")) {
    auto n = ParseUnsigned(*v, "--mtu", 256, 4096);
    if (!n) return std::move(n).error();
    const Mtu mtu = MtuFromBytes(static_cast<int>(*n));
    if (mtu == Mtu::kInvalid) {
      return Error(ErrorCode::kInvalidArgument, 0, "qp-mesh", "--mtu",
                   "MTU " + *v + " is not one of 256, 512, 1024, 2048, 4096");
    }
    m.session.mtu = mtu;  // described as forced: the plan and the peers follow it
  }
  return Ok();
}

// The ping-pong on every edge: rounds, size (UD: one MTU), deadline.
Result<void> ParseTraffic(const ParsedArgs& a, MeshOptions& m, std::vector<std::string>& notes) {
  if (auto v = a.Get("iters")) {
    auto n = ParseUnsigned(*v, "--iters", 1, 1000000);
    if (!n) return std::move(n).error();
    m.traffic_iters = static_cast<uint32_t>(*n);
  }
  if (a.Has("no-verify")) m.traffic_iters = 0;
  if (auto v = a.Get("size")) {
    auto n = ParseUnsigned(*v, "--size", 1, 1u << 24);
    if (!n) return std::move(n).error();
    m.session.message_size = static_cast<uint32_t>(*n);
    m.traffic_size = static_cast<uint32_t>(*n);
  }
  if (m.session.transport == Transport::kUd && m.traffic_size > 4096 - 40) {
    // A UD message fits in one MTU (and its GRH): the pingpong default.
    m.session.message_size = m.traffic_size = a.Has("size") ? m.traffic_size : 1024;
  }
  m.connect.plan.message_size = m.session.message_size;  // the UD rule checks it
  auto timeout = GetDuration(a, kTimeout, notes);
  if (!timeout) return std::move(timeout).error();
  if (*timeout) m.traffic_timeout = std::chrono::ceil<std::chrono::milliseconds>(**timeout);
  return Ok();
}

}  // namespace

Result<MeshCliOptions> ParseMeshOptions(const std::vector<std::string>& args) {
  auto parsed = ParseArgs(args, Specs());
  if (!parsed) return std::move(parsed).error();
  MeshCliOptions o;
  const ParsedArgs& a = *parsed;
  o.help = a.Has("help");
  o.version = a.Has("version");
  o.json = a.Has("json");
  if (!a.positionals.empty()) {
    return Error(ErrorCode::kInvalidArgument, 0, "qp-mesh", a.positionals.front(),
                 "unexpected argument '" + a.positionals.front() +
                     "' (every rank finds its peers through MPI: no host is given)");
  }
  QPC_TRY(ParseDevices(a, o.mesh));
  QPC_TRY(ParseQps(a, o.mesh));
  QPC_TRY(ParseTraffic(a, o.mesh, o.notes));
  o.notes.insert(o.notes.begin(), a.notes.begin(), a.notes.end());
  return o;
}

}  // namespace qpconnect::tools
