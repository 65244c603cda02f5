// SPDX-License-Identifier: MIT
#include "run.h"

#include <cerrno>

#include "cli_args.h"
#include "exit_codes.h"
#include "format.h"
#include "json_document.h"
#include "path_mode.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/device_query.h"
#include "usage.h"
#include "version.h"

namespace qpconnect::tools {
namespace {

constexpr std::string_view kTool = "qp-info";

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'d', "ib-dev", true, "NAME", "only this device (default: all)"},
    {'l', "list", false, "", "print only the device names, one per line (as ibv_devinfo -l)"},
    {'i', "ib-port", true, "PORT", "only this port (default: all)"},
    {0, "json", false, "", "print one JSON document instead of the table"},
    {0, "path", true, "DEST",
     "ask the subnet administrator for the PathRecord to DEST (a LID, decimal or 0x hex, or a "
     "GID); needs libibumad only"},
    {0, "pkey", true, "PKEY", "with --path: the partition the path must be in"},
    {0, "sl", true, "SL", "with --path: the service level the path must have"},
    {0, "timeout", true, "SECONDS",
     "with --path: give up after this long (default 3; 0.01..600; a bare number of 100 or more "
     "is read as milliseconds, deprecated)"},
    {'h', "help", false, "", "show this help"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// The statuses qp-info exits with (exit_codes.h's table).
constexpr ExitCode kExits[] = {kExitOk,    kExitUsage,  kExitNoDevice,
                               kExitVerbs, kExitNoPath, kExitSa};

std::string Help() {
  return "Usage: qp-info [options]\n\n"
         "Lists RDMA devices and ports: node GUID, port state, link layer, netdev, link\n"
         "speed and width, LID/LMC/SM LID, active and max MTU, the GID table (type,\n"
         "family, netdev), the P_Key table, and the device limits that matter for\n"
         "connecting queue pairs. -l lists only the device names.\n\nOptions:\n" +
         FormatOptions(Specs()) +
         "\nWith --path DEST, prints the subnet administrator's PathRecord from the local\n"
         "port (-d, -i; under ibsim the umad CA ibsim0) to DEST instead: SL, MTU, rate,\n"
         "packet lifetime, P_Key, hop limit, flow label, traffic class. InfiniBand only.\n"
         "\nDurations are seconds, with a fraction or a unit: 2, 0.5, 500ms, 1m.\n\n" +
         ExitStatusHelp(kExits);
}

}  // namespace

int RunQpInfo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = ParseArgs(args, Specs());
  if (!parsed) return UsageError(kTool, err, parsed.error().detail);
  if (auto answered = AnswerHelpOrVersion(*parsed, kTool, Help, out)) return *answered;
  PrintNotes(kTool, parsed->notes, err);
  if (parsed->Has("path")) return RunPathQuery(*parsed, out, err);
  for (const char* only_with_path : {"pkey", "sl", "timeout"}) {
    if (parsed->Has(only_with_path)) {
      return UsageError(kTool, err, std::string("--") + only_with_path + " needs --path");
    }
  }
  if (!parsed->positionals.empty()) {
    return UsageError(kTool, err, "unexpected argument '" + parsed->positionals.front() + "'");
  }
  std::optional<uint8_t> port_filter;
  if (auto p = parsed->Get("ib-port")) {
    auto v = ParseUnsigned(*p, "--ib-port", 1, 255);
    if (!v) {
      err << "qp-info: " << v.error().detail << "\n";
      return kExitUsage;
    }
    port_filter = static_cast<uint8_t>(*v);
  }

  // With --json, a machine reader gets a document on stdout even without a
  // device: no devices, and why.
  const bool json = parsed->Has("json");
  auto no_device_json = [&](const Error& why) {
    if (json) {
      nlohmann::ordered_json doc = JsonDocument();
      doc["devices"] = nlohmann::ordered_json::array();
      doc["error"] = ErrorObject(why);
      out << doc.dump(2) << "\n";
    }
  };
  auto names = verbs::ListDevices();
  if (!names) {
    no_device_json(names.error());
    err << "qp-info: no RDMA device: " << names.error().ToString() << "\n";
    if (names.error().sys_errno == ENOSYS) {
      err << "  this kernel has no RDMA (InfiniBand/RoCE) support; see docs/lab.md for the "
             "Soft-RoCE lab\n";
    }
    return kExitNoDevice;
  }
  std::string wanted = parsed->Get("ib-dev").value_or("");
  if (names->empty()) {
    no_device_json(
        Error{ErrorCode::kNotFound, 0, "ibv_get_device_list", "", "no RDMA device found"});
    err << "qp-info: no RDMA device found (no driver loaded, or a kernel without RDMA support;\n"
           "  `rdma link` lists none). For a software device: rdma link add rxe0 type rxe "
           "netdev eth0\n";
    return kExitNoDevice;
  }
  if (parsed->Has("list")) {
    if (json) {
      nlohmann::ordered_json doc = JsonDocument();
      doc["device_names"] = *names;
      out << doc.dump(2) << "\n";
    } else {
      for (const auto& n : *names) out << n << "\n";
    }
    return kExitOk;
  }
  std::vector<DeviceInfo> devices;
  for (const auto& name : *names) {
    if (!wanted.empty() && name != wanted) continue;
    auto ctx = verbs::OpenDevice(name);
    if (!ctx) {
      err << "qp-info: " << ctx.error().ToString() << "\n";
      return kExitVerbs;
    }
    auto info = verbs::QueryDevice(**ctx);
    if (!info) {
      err << "qp-info: " << name << ": " << info.error().ToString() << "\n";
      return kExitVerbs;
    }
    if (port_filter) {
      std::vector<PortInfo> kept;
      for (auto& p : info->ports) {
        if (p.facts.port_num == *port_filter) kept.push_back(std::move(p));
      }
      if (kept.empty()) {
        err << "qp-info: device " << name << " has no port " << unsigned{*port_filter}
            << " (it has " << info->ports.size() << ")\n";
        return kExitNoDevice;
      }
      info->ports = std::move(kept);
    }
    devices.push_back(std::move(*info));
  }
  if (devices.empty()) {
    std::string list;
    for (const auto& n : *names) list += (list.empty() ? "" : ", ") + n;
    err << "qp-info: no device named '" << wanted << "'; devices: " << list << "\n";
    return kExitNoDevice;
  }
  if (json) {
    out << DevicesToJson(devices).dump(2) << "\n";
  } else {
    out << FormatDevicesText(devices);
  }
  return kExitOk;
}

}  // namespace qpconnect::tools
