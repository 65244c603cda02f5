// SPDX-License-Identifier: MIT
#include "run.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_args.h"
#include "duration_arg.h"
#include "exit_codes.h"
#include "launch.h"
#include "version.h"

namespace qpconnect::tools::qp_cm {
namespace {

constexpr OptionSpec kSpecs[] = {
    {0,
     "devices",
     true,
     "ADDR=DEV[:PORT[:GID]],...",
     "the RDMA device (port, default 1; GID index, default chosen) serving each local address "
     "that is not on an RDMA netdev (sets QPCM_DEVICES)",
     {},
     "D"},
    {'c', "config", true, "FILE",
     "a file of 'ADDR DEV[:PORT[:GID]]' lines, '#' comments (sets QPCM_CONFIG)"},
    {'k', "psk-file", true, "FILE",
     "a pre-shared key both sides hold (qp-connect --gen-psk makes one): the exchange is "
     "authenticated and encrypted (QPCM_PSK_FILE)"},
    {0,
     "log",
     true,
     "FILE",
     "append the library's messages to FILE, not stderr (QPCM_LOG)",
     {},
     "l"},
    {0,
     "timeout",
     true,
     "SECONDS",
     "how long a connection request or reply waits for its answer (sets QPCM_TIMEOUT_MS; "
     "default 10; 0.001..3600; a bare number of 100 or more is read as milliseconds, "
     "deprecated)",
     {},
     "t"},
    {0,
     "mode",
     true,
     "preload|library-path",
     "how PROGRAM gets the library: LD_PRELOAD (default) or LD_LIBRARY_PATH with "
     "compat/librdmacm.so.1",
     {},
     "m"},
    {'h', "help", false, "", "show this help and exit"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// qp-cm's own statuses (exit_codes.h's table); otherwise PROGRAM's.
constexpr ExitCode kExits[] = {kExitUsage, kExitCannotRun, kExitNotFound};

// --timeout: milliseconds before issue 40, hence was_milliseconds.
constexpr DurationOption kTimeout{"--timeout", std::chrono::milliseconds(1), std::chrono::hours(1),
                                  true};

std::string Help() {
  return "Usage: qp-cm [OPTIONS] [--] PROGRAM [ARGS...]\n"
         "\n"
         "Runs an unmodified rdma_cm program (rping, cmtime, udaddy, rdma_server, perftest -R,\n"
         "...) with libqpcm.so, the librdmacm API over qpconnect's out-of-band exchange: it\n"
         "needs no IPoIB, no kernel rdma_cm (/dev/infiniband/rdma_cm) and no IP address on an\n"
         "RDMA netdev. Both ends must run through qp-cm; the ports programs name are TCP\n"
         "ports. Each connection is validated before any modify; a finding becomes a\n"
         "REJECTED event on both sides, with the rule named on stderr (or --log).\n"
         "\n"
         "An address on a RoCE netdev needs no mapping; any other address is mapped by\n"
         "--devices, --config, or to the host's only active port.\n"
         "\n"
         "Options:\n" +
         FormatOptions(Specs()) +
         "\n"
         "Durations are seconds, with a fraction or a unit: 2, 0.5, 500ms, 1m.\n"
         "\n"
         "Environment: QPCM_LIBRARY overrides the path of libqpcm.so; QPCM_DEVICES already\n"
         "set is kept after --devices.\n"
         "\n"
         "qp-cm execs PROGRAM, which keeps qp-cm's pid and exits with its own status; qp-cm\n"
         "itself exits only when it cannot (2: a bad command line or no library).\n"
         "\n" +
         ExitStatusHelp(kExits);
}

// Any numeric spelling the library reads (rdmacm/src/sockaddr.h's
// ParseAddress): IPv4, IPv6 with or without brackets, a link-local scope
// ("fe80::1%mgmt0", "fe80::1%3").
bool IsNumericAddress(std::string addr) {
  if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']')
    addr = addr.substr(1, addr.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (addr.empty() || getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0) return false;
  freeaddrinfo(res);
  return true;
}

// "ADDR=DEV[:PORT[:GID]],...": each address numeric, each device named, each
// port 1..255, each GID index 0..255.
Result<void> CheckDeviceMap(const std::string& map) {
  std::stringstream list(map);
  std::string item;
  while (std::getline(list, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return Usage("--devices: '" + item + "' is not ADDR=DEV[:PORT]");
    std::string addr = item.substr(0, eq);
    if (!IsNumericAddress(addr))
      return Usage("--devices: '" + addr + "' is not an IPv4 or IPv6 address");
    std::string dev = item.substr(eq + 1);
    if (auto colon = dev.find(':'); colon != std::string::npos) {
      if (colon == 0) return Usage("--devices: no device name in '" + item + "'");
      std::string rest = dev.substr(colon + 1);
      auto second = rest.find(':');
      auto port = ParseUnsigned(rest.substr(0, second), "--devices port of " + addr, 1, 255);
      if (!port) return port.error();
      if (second != std::string::npos) {
        auto gid = ParseUnsigned(rest.substr(second + 1), "--devices GID index of " + addr, 0, 255);
        if (!gid) return gid.error();
      }
    }
  }
  return {};
}

}  // namespace

LaunchContext CurrentContext() {
  LaunchContext c;
  c.self_dir = SelfDir();
  auto get = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  c.library_override = get("QPCM_LIBRARY");
  c.devices = get("QPCM_DEVICES");
  c.ld_preload = get("LD_PRELOAD");
  c.ld_library_path = get("LD_LIBRARY_PATH");
  return c;
}

Result<Launch> PrepareLaunch(const std::vector<std::string>& args, const LaunchContext& context) {
  Launch launch;
  Result<ParsedArgs> parsed = ParseLauncherArgs(args, Specs(), "run", launch);
  if (!parsed) return parsed.error();
  launch.notes = parsed->notes;

  std::string mode = parsed->Get("mode").value_or("preload");
  if (mode != "preload" && mode != "library-path")
    return Usage("--mode wants preload or library-path, not '" + mode + "'");
  Result<std::string> library =
      FindLibrary("libqpcm.so", "QPCM_LIBRARY", context.library_override, context.self_dir,
                  {"../../rdmacm/libqpcm.so", QPC_CM_LIBRARY_INSTALLED});
  if (!library) return library.error();

  if (auto map = parsed->Get("devices")) {
    QPC_TRY(CheckDeviceMap(*map));
    launch.env.emplace_back("QPCM_DEVICES",
                            context.devices.empty() ? *map : *map + "," + context.devices);
  }
  if (auto config = parsed->Get("config")) {
    std::ifstream file(*config);
    if (!file) return Usage("--config: cannot read '" + *config + "'");
    launch.env.emplace_back("QPCM_CONFIG", std::filesystem::absolute(*config).string());
  }
  if (auto key = parsed->Get("psk-file")) {
    std::ifstream file(*key);
    if (!file) return Usage("--psk-file: cannot read '" + *key + "'");
    launch.env.emplace_back("QPCM_PSK_FILE", std::filesystem::absolute(*key).string());
  }
  if (auto log = parsed->Get("log")) {
    if (log->empty()) return Usage("--log needs a file name");
    launch.env.emplace_back("QPCM_LOG", std::filesystem::absolute(*log).string());
  }
  auto timeout = GetDuration(*parsed, kTimeout, launch.notes);
  if (!timeout) return timeout.error();
  if (*timeout) {
    // The library reads whole milliseconds: a fraction of one rounds up.
    launch.env.emplace_back(
        "QPCM_TIMEOUT_MS",
        std::to_string(std::chrono::ceil<std::chrono::milliseconds>(**timeout).count()));
  }
  if (mode == "preload") {
    launch.env.emplace_back("LD_PRELOAD", PrependPath(*library, context.ld_preload.c_str()));
  } else {
    std::string compat = (std::filesystem::path(*library).parent_path() / "compat").string();
    if (!std::filesystem::exists(compat + "/librdmacm.so.1"))
      return Error{ErrorCode::kNotFound, 0, "librdmacm.so.1", "",
                   compat + "/librdmacm.so.1 is missing (needed by --mode library-path)"};
    launch.env.emplace_back("LD_LIBRARY_PATH",
                            PrependPath(compat, context.ld_library_path.c_str()));
  }
  return launch;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunLauncher("qp-cm", args, Specs(), Help, PrepareLaunch, CurrentContext, out, err);
}

}  // namespace qpconnect::tools::qp_cm
