// SPDX-License-Identifier: MIT
// qp-connect's command line: ibv_rc_pingpong/perftest conventions plus the
// exchange, validation and reporting options of qpconnect.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect::tools {

enum class OobKind { kTcp, kFile, kStdio };
// The format on the out-of-band channel: ours (docs/wire-format.md) or the
// stock ibv_*_pingpong record (docs/interop.md; tcp only).
enum class WireKind { kQpc, kPingpong };
// Where the path attributes come from: the two descriptions (PlanConnection),
// or the InfiniBand subnet administrator's PathRecord (docs/ib-paths.md).
enum class PathKind { kLocal, kSa };

struct ConnectOptions {
  verbs::SessionOptions session;
  PlanOptions plan;
  OobKind oob = OobKind::kTcp;
  WireKind wire = WireKind::kQpc;
  PathKind path = PathKind::kLocal;
  bool sl_given = false;            // --sl: with --path sa, asked of the SA
  std::optional<std::string> host;  // tcp: set = client
  bool client = false;              // sends first; tcp: a HOST was given
  uint16_t tcp_port = 18515;
  std::string bind_address;  // tcp server
  std::string oob_dir;       // file
  std::string oob_session = "qpconnect";
  std::optional<std::string> psk_file;
  std::optional<std::string> gen_psk;  // --gen-psk FILE: write a key and exit
  std::chrono::milliseconds timeout{30000};
  uint32_t iters = 1000;
  std::optional<std::chrono::milliseconds> duration;  // -D: instead of iters
  bool sweep = false;                                 // -a: sizes 2..message_size
  bool report_gbits = false;                          // bandwidth in Gb/s, not MB/s
  std::optional<std::string> dump_file;
  bool json = false;
  bool validate = true;
  bool verify = true;
  bool verbose = false;
  // --serve / --count N (tcp server only): serve peers one after another
  // (tools/qp-connect/serve.h); count: stop after that many.
  bool serve = false;
  std::optional<uint32_t> count;
  bool help = false;
  bool version = false;  // --version: print ConnectVersion() and exit
  // Deprecation notes (a deprecated spelling used) for stderr, "qp-connect: NOTE".
  std::vector<std::string> notes;
};

// kInvalidArgument naming the option for anything unusable.
Result<ConnectOptions> ParseConnectOptions(const std::vector<std::string>& args);

// SessionOptions::provider_cache from QPC_PROVIDER_CACHE
// (verbs::ProviderCacheFromEnvironment()).
Result<std::string> ProviderCacheFromEnv();

std::string ConnectHelp();

// What --version prints: "qp-connect (qpconnect) X.Y.Z" and the wire format.
std::string ConnectVersion();

}  // namespace qpconnect::tools
