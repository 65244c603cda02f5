// SPDX-License-Identifier: MIT
#include "options.h"

#include <chrono>
#include <cstdlib>

#include "cli_args.h"
#include "duration_arg.h"
#include "exit_codes.h"
#include "qpconnect/verbs/provider_cache.h"
#include "version.h"

namespace qpconnect::tools {
namespace {

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'d', "ib-dev", true, "NAME", "RDMA device (default: the first one)"},
    {'i', "ib-port", true, "PORT", "port of the device (default 1)"},
    {'g', "gid-idx", true, "INDEX",
     "GID index to send from (default: chosen: RoCE v2, family, not link-local)", "x"},
    {0, "gid-family", true, "ipv4|ipv6",
     "address family for the automatic GID choice (default ipv4)"},
    {'m', "mtu", true, "BYTES", "force the path MTU (256..4096; default: min of both ports)"},
    {'p', "port", true, "PORT", "TCP port of the exchange (default 18515)"},
    {0, "bind", true, "ADDR", "tcp server: address to listen on (default: any)"},
    {'s', "size", true, "BYTES", "message size (default 4096, UD 1024)"},
    {'n', "iters", true, "N", "ping-pong iterations (default 1000)"},
    {'D', "duration", true, "SECONDS",
     "run the ping-pong for this long (1..86400) instead of -n iterations (the server "
     "follows the client's last round; not with --wire pingpong)"},
    {'a', "all", false, "",
     "size sweep: ping-pong at every power of two from 2 to --size bytes, each reported "
     "(both sides; as perftest's -a)"},
    {0, "report-gbits", false, "", "report bandwidth in Gb/s instead of MB/s (as perftest)"},
    {'e', "events", false, "",
     "wait for completions with completion events (a completion channel, poll() on its fd) "
     "instead of polling the CQs"},
    {'r', "rx-depth", true, "N", "receives posted per QP (default 16)"},
    {'t', "transport", true, "rc|uc|ud", "QP transport (default rc)"},
    {0, "oob", true, "tcp|file|stdio|mpi",
     "out-of-band channel (default tcp); mpi: under mpirun, every rank to every other (runs "
     "qp-mesh with the other options; docs/mesh.md)"},
    {0, "wire", true, "qpc|pingpong",
     "exchange format: ours (default), or that of ibv_rc/uc/ud_pingpong (tcp only; "
     "docs/interop.md)"},
    {0, "role", true, "server|client",
     "file/stdio, required there: which side this is (the client sends first)"},
    {0, "oob-dir", true, "DIR", "file: the directory both sides share"},
    {0, "session", true, "ID", "file: session id naming the files (default qpconnect)"},
    {'q', "qps", true, "N", "number of QP pairs (default 1)"},
    {0, "psk-file", true, "FILE",
     "pre-shared key (mode 0600, at least 16 bytes): authenticate and encrypt the exchange"},
    {0, "gen-psk", true, "FILE",
     "write a fresh random 32-byte key to FILE (mode 0600; never overwrites) and exit"},
    {0, "timeout", true, "SECONDS",
     "deadline of the exchange, the barrier and each wait (default 30; 1..86400)"},
    {0, "psn", true, "PSN", "force the first send PSN (default random)"},
    {0, "qkey", true, "QKEY", "UD Q_Key (default 0x11111111)"},
    {0, "sl", true, "SL", "service level (default 0)", {}, "l"},
    {0, "tclass", true, "TC",
     "GRH traffic class, 0..255 (DSCP << 2 | ECN; RoCE lossless classes; default 0)"},
    {0, "flow-label", true, "LABEL", "GRH flow label, 0..0xfffff (default 0)"},
    {0, "pkey", true, "PKEY", "use the P_Key index holding this P_Key value"},
    {0, "path", true, "local|sa",
     "path attributes from both descriptions (default), or on InfiniBand from the subnet "
     "administrator's PathRecord: DLID, SL, MTU, ACK timeout, GRH across routers (as "
     "rdma_cm; docs/ib-paths.md)"},
    {0, "serve", false, "",
     "tcp server: serve peers one after another, each with its own QPs and report, until "
     "SIGINT/SIGTERM (exit 130/143) or --count"},
    {0, "count", true, "N", "tcp server: serve N peers, then exit (implies --serve)"},
    {0, "dump", true, "FILE", "write both descriptions (and this side's plan) as JSON"},
    {0, "json", false, "", "print one JSON report instead of text"},
    {0, "no-validate", false, "", "connect even when the validator finds errors"},
    {0, "no-verify", false, "", "skip the traffic that proves the connection"},
    {'v', "verbose", false, "", "also print info findings and each step"},
    {'h', "help", false, "", "show this help"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// The statuses qp-connect exits with (exit_codes.h's table).
constexpr ExitCode kExits[] = {kExitOk,         kExitUsage,    kExitNoDevice, kExitExchange,
                               kExitValidation, kExitVerbs,    kExitTraffic,  kExitNoPath,
                               kExitSa,         kExitPathLoss, kExitSigint,   kExitSigterm};

constexpr DurationOption kTimeout{"--timeout", std::chrono::seconds(1), std::chrono::hours(24)};
constexpr DurationOption kDuration{"--duration", std::chrono::seconds(1), std::chrono::hours(24)};

struct HostPort {
  std::string host;
  std::optional<uint16_t> port;
};

// HOST as users type it: "host", "host:port", "10.0.0.1:7000", "[fe80::1]",
// "[fe80::1]:7000", or a bare IPv6 address (two colons or more: no port).
Result<HostPort> SplitHostPort(const std::string& text) {
  HostPort hp;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) return Usage("HOST '" + text + "': no ']' after the address");
    hp.host = text.substr(1, close - 1);
    const std::string rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Usage("HOST '" + text + "': expected ':PORT' after ']'");
      port = rest.substr(1);
    }
  } else if (const auto colon = text.find(':');
             colon != std::string::npos && text.find(':', colon + 1) == std::string::npos) {
    hp.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else {
    hp.host = text;
  }
  if (hp.host.empty()) return Usage("HOST '" + text + "': no host before the port");
  if (!port.empty() || text.back() == ':') {
    auto n = ParseUnsigned(port, "HOST '" + text + "': the port", 1, 65535);
    if (!n) return std::move(n).error();
    hp.port = static_cast<uint16_t>(*n);
  }
  return hp;
}

// --NAME's number within [min, max], given to `apply`; nothing when absent.
template <class Apply>
Result<void> Number(const ParsedArgs& p, const char* name, unsigned long min, unsigned long max,
                    Apply apply) {
  if (auto v = p.Get(name)) {
    auto n = ParseUnsigned(*v, std::string("--") + name, min, max);
    if (!n) return std::move(n).error();
    apply(*n);
  }
  return Ok();
}

// The QPs and where they live: transport (and the sizes it defaults), device,
// port, GID and the forced MTU.
Result<void> ParseQpSide(const ParsedArgs& p, ConnectOptions& o) {
  auto& s = o.session;
  if (auto t = p.Get("transport")) {
    if (*t == "rc")
      s.transport = Transport::kRc;
    else if (*t == "uc")
      s.transport = Transport::kUc;
    else if (*t == "ud")
      s.transport = Transport::kUd;
    else
      return Usage("--transport: '" + *t + "' is not rc, uc or ud");
  }
  s.message_size = s.transport == Transport::kUd ? 1024 : 4096;
  s.rx_depth = 16;
  // Its traffic has one message in flight at a time across all QPs
  // (verbs/traffic.h): one buffer slot serves them all (issue 15).
  s.shared_buffers = true;
  s.device = p.Get("ib-dev").value_or("");
  QPC_TRY(Number(p, "ib-port", 1, 255, [&](unsigned long v) { s.port = static_cast<uint8_t>(v); }));
  QPC_TRY(Number(p, "gid-idx", 0, 65535,
                 [&](unsigned long v) { s.gid.index = static_cast<uint16_t>(v); }));
  if (auto f = p.Get("gid-family")) {
    if (*f == "ipv4")
      s.gid.family = GidFamily::kIpv4;
    else if (*f == "ipv6")
      s.gid.family = GidFamily::kIpv6;
    else
      return Usage("--gid-family: '" + *f + "' is not ipv4 or ipv6");
  }
  if (auto m = p.Get("mtu")) {
    auto n = ParseUnsigned(*m, "--mtu", 256, 4096);
    if (!n) return std::move(n).error();
    Mtu mtu = MtuFromBytes(static_cast<int>(*n));
    if (mtu == Mtu::kInvalid) return Usage("--mtu: " + *m + " is not 256, 512, 1024, 2048 or 4096");
    s.mtu = mtu;  // described as forced: the plan and the peer follow it
  }
  return Ok();
}

// The numbers: the tcp port, sizes and counts, the deadline, and the
// attributes a user may force (PSN, Q_Key, SL, GRH, P_Key).
Result<void> ParseNumbers(const ParsedArgs& p, ConnectOptions& o) {
  auto& s = o.session;
  QPC_TRY(
      Number(p, "port", 1, 65535, [&](unsigned long v) { o.tcp_port = static_cast<uint16_t>(v); }));
  QPC_TRY(Number(p, "size", 1, 1UL << 30,
                 [&](unsigned long v) { s.message_size = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "iters", 1, 100000000,
                 [&](unsigned long v) { o.iters = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "rx-depth", 1, 65536,
                 [&](unsigned long v) { s.rx_depth = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "qps", 1, 1UL << 20,
                 [&](unsigned long v) { s.num_qps = static_cast<uint32_t>(v); }));
  auto timeout = GetDuration(p, kTimeout, o.notes);
  if (!timeout) return std::move(timeout).error();
  if (*timeout) o.timeout = std::chrono::ceil<std::chrono::milliseconds>(**timeout);
  QPC_TRY(
      Number(p, "psn", 0, kPsnMask, [&](unsigned long v) { s.psn = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "qkey", 0, 0xffffffffUL,
                 [&](unsigned long v) { s.qkey = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "sl", 0, 15, [&](unsigned long v) { s.sl = static_cast<uint8_t>(v); }));
  QPC_TRY(Number(p, "tclass", 0, 255,
                 [&](unsigned long v) { s.traffic_class = static_cast<uint8_t>(v); }));
  QPC_TRY(Number(p, "flow-label", 0, kFlowLabelMask,
                 [&](unsigned long v) { s.flow_label = static_cast<uint32_t>(v); }));
  QPC_TRY(Number(p, "pkey", 1, 0xffff,
                 [&](unsigned long v) { s.pkey_value = static_cast<uint16_t>(v); }));
  o.plan.message_size = s.message_size;
  return Ok();
}

// The traffic's shape (-D, -a, -e, --report-gbits) and the provider cache
// (QPC_PROVIDER_CACHE), then what of the shape excludes what.
Result<void> ParseTrafficShape(const ParsedArgs& p, ConnectOptions& o) {
  auto& s = o.session;
  auto duration = GetDuration(p, kDuration, o.notes);
  if (!duration) return std::move(duration).error();
  if (*duration) o.duration = std::chrono::ceil<std::chrono::milliseconds>(**duration);
  o.sweep = p.Has("all");
  s.completion_events = p.Has("events");
  if (auto cache = ProviderCacheFromEnv(); !cache) {
    return std::move(cache).error();
  } else {
    s.provider_cache = std::move(*cache);
  }
  o.report_gbits = p.Has("report-gbits");
  if (o.duration && p.Has("iters")) {
    return Usage("-D (a duration) and -n (an iteration count) exclude each other");
  }
  if (o.sweep && s.message_size < 2) {
    return Usage("-a sweeps 2..--size bytes: --size " + std::to_string(s.message_size) +
                 " is below 2");
  }
  return Ok();
}

// The out-of-band channel: --oob, HOST (and its port), --role, --oob-dir.
Result<void> ParseChannel(const ParsedArgs& p, ConnectOptions& o) {
  if (auto k = p.Get("oob")) {
    if (*k == "tcp")
      o.oob = OobKind::kTcp;
    else if (*k == "file")
      o.oob = OobKind::kFile;
    else if (*k == "stdio")
      o.oob = OobKind::kStdio;
    else
      return Usage("--oob: '" + *k + "' is not tcp, file, stdio or mpi");
  }
  if (p.positionals.size() > 1) return Usage("at most one HOST, got '" + p.positionals[1] + "'");
  if (!p.positionals.empty()) {
    auto hp = SplitHostPort(p.positionals.front());
    if (!hp) return std::move(hp).error();
    o.host = hp->host;
    if (hp->port) {
      if (p.Has("port") && o.tcp_port != *hp->port) {
        return Usage("HOST '" + p.positionals.front() + "' names port " +
                     std::to_string(*hp->port) + " but -p says " + std::to_string(o.tcp_port));
      }
      o.tcp_port = *hp->port;
    }
  }
  if (auto r = p.Get("role")) {
    if (*r != "server" && *r != "client")
      return Usage("--role: '" + *r + "' is not server or client");
    if (o.oob == OobKind::kTcp)
      return Usage("--role is for --oob file|stdio; tcp: give HOST to be the client");
    o.client = *r == "client";
  } else if (o.oob != OobKind::kTcp) {
    return Usage("--oob file|stdio needs --role server|client (the client sends first)");
  }
  if (o.oob == OobKind::kTcp) {
    o.client = o.host.has_value();
  } else if (o.host) {
    return Usage("HOST is for --oob tcp; got '" + *o.host + "' with another channel");
  }
  if (o.oob == OobKind::kFile) {
    auto dir = p.Get("oob-dir");
    if (!dir || dir->empty())
      return Usage("--oob file needs --oob-dir DIR (a directory both sides see)");
    o.oob_dir = *dir;
  } else if (p.Has("oob-dir")) {
    return Usage("--oob-dir is for --oob file");
  }
  return Ok();
}

// --wire, and what the stock pingpong dialect cannot do.
Result<void> ParseWire(const ParsedArgs& p, ConnectOptions& o) {
  auto& s = o.session;
  if (auto w = p.Get("wire")) {
    if (*w == "qpc") {
      o.wire = WireKind::kQpc;
    } else if (*w == "pingpong") {
      o.wire = WireKind::kPingpong;
    } else {
      return Usage("--wire: '" + *w + "' is not qpc or pingpong");
    }
  }
  if (o.wire == WireKind::kPingpong) {
    // The stock programs speak only TCP, one QP, no key; -m defaults to theirs.
    if (o.oob != OobKind::kTcp) return Usage("--wire pingpong needs --oob tcp");
    // Their loop runs -n iterations of one size: no way to tell them to stop.
    if (o.duration) return Usage("-D is for --wire qpc (the stock pingpong loop runs -n rounds)");
    if (o.sweep) return Usage("-a is for --wire qpc (the stock pingpong loop has one size)");
    if (s.num_qps != 1) return Usage("--wire pingpong connects one QP (the stock programs' only)");
    if (p.Has("psk-file")) return Usage("--wire pingpong has no authentication: drop --psk-file");
    if (!s.mtu) s.mtu = Mtu::k1024;  // ibv_rc/uc_pingpong's default -m
  }
  return Ok();
}

// --path: where the path attributes come from.
Result<void> ParsePathSource(const ParsedArgs& p, ConnectOptions& o) {
  if (auto v = p.Get("path")) {
    if (*v == "local") {
      o.path = PathKind::kLocal;
    } else if (*v == "sa") {
      o.path = PathKind::kSa;
    } else {
      return Usage("--path: '" + *v + "' is not local or sa");
    }
  }
  if (o.path == PathKind::kSa && o.wire == WireKind::kPingpong) {
    return Usage("--path sa is for --wire qpc (the stock pingpong programs guess their path)");
  }
  o.sl_given = p.Has("sl");
  return Ok();
}

// Names, files and switches: --session, --bind, the key, --dump, --json,
// the gate and the proof, -v.
Result<void> ParseFilesAndSwitches(const ParsedArgs& p, ConnectOptions& o) {
  const auto& s = o.session;
  o.oob_session = p.Get("session").value_or(o.oob_session);
  o.bind_address = p.Get("bind").value_or("");
  o.psk_file = p.Get("psk-file");
  o.dump_file = p.Get("dump");
  o.json = p.Has("json");
  o.validate = !p.Has("no-validate");
  o.verify = !p.Has("no-verify");
  if (!o.verify && (o.duration || o.sweep || o.report_gbits || s.completion_events)) {
    return Usage(std::string(o.duration       ? "-D"
                             : o.sweep        ? "-a"
                             : o.report_gbits ? "--report-gbits"
                                              : "-e") +
                 " shapes the traffic, which --no-verify skips: drop one of them");
  }
  o.verbose = p.Has("verbose");
  return Ok();
}

// --serve / --count: a tcp server of our dialect serving peers one after another.
Result<void> ParseServing(const ParsedArgs& p, ConnectOptions& o) {
  QPC_TRY(
      Number(p, "count", 1, 1000000, [&](unsigned long v) { o.count = static_cast<uint32_t>(v); }));
  o.serve = p.Has("serve") || o.count.has_value();
  if (o.serve) {
    const std::string opt = p.Has("serve") ? "--serve" : "--count";
    if (o.oob != OobKind::kTcp) return Usage(opt + " is for --oob tcp (a server that listens)");
    if (o.client) return Usage(opt + " is for the tcp server: drop HOST");
    if (o.wire == WireKind::kPingpong) return Usage(opt + " is for --wire qpc");
    if (o.dump_file) return Usage(opt + ": --dump writes one peer's descriptions; drop it");
  }
  return Ok();
}

}  // namespace

std::string ConnectHelp() {
  return "Usage: qp-connect [options] [HOST]\n\n"
         "Connects RDMA queue pairs by hand (RESET->INIT->RTR->RTS, no librdmacm) with the\n"
         "peer found through an out-of-band exchange, validates both sides first, and proves\n"
         "the connection with traffic. With HOST (tcp) this side is the client, as with\n"
         "ibv_rc_pingpong; without, it waits for one. HOST is a name or address, with an\n"
         "optional port: host:7000, 10.0.0.1:7000, [fe80::1%eth0]:7000.\n\n"
         "Options:\n" +
         FormatOptions(Specs()) +
         "\nExamples:\n"
         "  qp-connect -d rxe0                         # server\n"
         "  qp-connect -d rxe1 10.99.0.1               # client\n"
         "  qp-connect --oob file --oob-dir /shared --role server   (and --role client)\n"
         "  ssh peer qp-connect --oob stdio --role server  (pipes both ways)\n"
         "  qp-connect --wire pingpong -d rxe1 10.99.0.1  # peer: ibv_rc_pingpong -d rxe0 -g 1\n"
         "  qp-connect --count 3 -d rxe0               # serve 3 clients, one after another\n"
         "  qp-connect --gen-psk qpc.key               # then copy qpc.key to the peer; both\n"
         "  qp-connect --psk-file qpc.key ...          # sides: authenticated and encrypted\n"
         "  mpirun -np 4 qp-connect --oob mpi --devices rxe0,rxe1   # an all-to-all mesh\n\n"
         "Durations are seconds, with a fraction or a unit: 2, 0.5, 500ms, 1m.\n\n"
         "Environment: QPC_PROVIDER_CACHE=PATH|off, the file that remembers each device's\n"
         "libibverbs provider so that it loads first (default ~/.cache/qpconnect/providers).\n\n"
         "0: connected (and traffic verified); 8, 9: with --path sa. --serve/--count: 0 if\n"
         "every peer succeeded, else the first failed peer's status; 130 or 143 when\n"
         "interrupted.\n\n" +
         ExitStatusHelp(kExits);
}

Result<std::string> ProviderCacheFromEnv() { return verbs::ProviderCacheFromEnvironment(); }

std::string ConnectVersion() { return VersionText("qp-connect"); }

Result<ConnectOptions> ParseConnectOptions(const std::vector<std::string>& args) {
  auto parsed = ParseArgs(args, Specs());
  if (!parsed) return std::move(parsed).error();
  const ParsedArgs& p = *parsed;
  ConnectOptions o;
  o.notes = p.notes;
  if (p.Has("help")) {
    o.help = true;
    return o;
  }
  if (p.Has("version")) {
    o.version = true;
    return o;
  }
  if (auto g = p.Get("gen-psk")) {
    if (g->empty()) return Usage("--gen-psk: empty file name");
    o.gen_psk = *g;
    return o;
  }
  // In this order: a command line with several faults is refused for the
  // first one met, as ever.
  QPC_TRY(ParseQpSide(p, o));
  QPC_TRY(ParseNumbers(p, o));
  QPC_TRY(ParseTrafficShape(p, o));
  QPC_TRY(ParseChannel(p, o));
  QPC_TRY(ParseWire(p, o));
  QPC_TRY(ParsePathSource(p, o));
  QPC_TRY(ParseFilesAndSwitches(p, o));
  QPC_TRY(ParseServing(p, o));
  return o;
}

}  // namespace qpconnect::tools
