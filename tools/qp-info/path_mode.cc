// SPDX-License-Identifier: MIT
#include "path_mode.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "duration_arg.h"
#include "exit_codes.h"
#include "hex_text.h"
#include "json_document.h"
#include "qpconnect/sa/umad_channel.h"
#include "sa_report.h"
#include "usage.h"

namespace qpconnect::tools {
namespace {

// --timeout: milliseconds before issue 40, hence was_milliseconds.
constexpr DurationOption kTimeout{"--timeout", std::chrono::milliseconds(10),
                                  std::chrono::seconds(600), true};

const char* SelectorName(uint8_t s) {
  switch (s) {
    case 0:
      return "greater than";
    case 1:
      return "less than";
    case 2:
      return "exactly";
    default:
      return "largest available";
  }
}

std::string Lifetime(uint8_t v) {
  const double us = static_cast<double>(IbTimeValue(v).count()) / 1000.0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%u (%.1f us)", unsigned{v}, us);
  return buf;
}

}  // namespace

std::string FormatPathRecordText(const sa::SaPort& port, const PathRecord& r) {
  std::ostringstream o;
  o << "PathRecord from " << port.ca_name << " port " << unsigned{port.port_num} << " (SA at LID "
    << port.sm_lid << ")\n"
    << "  slid " << r.slid << " -> dlid " << r.dlid << "\n"
    << "  sgid " << GidToString(r.sgid) << "\n"
    << "  dgid " << GidToString(r.dgid) << "\n"
    << "  sl " << unsigned{r.sl} << ", qos_class " << r.qos_class << ", pkey " << Hex(r.pkey, 4)
    << "\n"
    << "  mtu " << MtuBytes(r.mtu) << " (" << SelectorName(r.mtu_selector) << ")\n"
    << "  rate " << RateGbps(r.rate) << " Gb/s (code " << unsigned{r.rate} << ", "
    << SelectorName(r.rate_selector) << ")\n"
    << "  packet_lifetime " << Lifetime(r.packet_lifetime) << " -> ack_timeout "
    << unsigned{AckTimeoutForPacketLifetime(r.packet_lifetime)} << "\n"
    << "  hop_limit " << unsigned{r.hop_limit} << ", flow_label " << Hex(r.flow_label, 5)
    << ", traffic_class " << unsigned{r.traffic_class} << "\n"
    << "  reversible " << (r.reversible ? "yes" : "no") << ", preference " << unsigned{r.preference}
    << "\n";
  return o.str();
}

int RunPathQuery(const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  auto query = sa::ParseDestination(*args.Get("path"));
  if (!query) {
    err << "qp-info: --path: " << query.error().detail << "\n";
    return kExitUsage;
  }
  uint8_t port_num = 0;
  if (auto p = args.Get("ib-port")) {
    auto v = ParseUnsigned(*p, "--ib-port", 1, 255);
    if (!v) {
      err << "qp-info: " << v.error().detail << "\n";
      return kExitUsage;
    }
    port_num = static_cast<uint8_t>(*v);
  }
  if (auto p = args.Get("pkey")) {
    auto v = ParseUnsigned(*p, "--pkey", 1, 0xffff);
    if (!v || (*v & 0x7fff) == 0) {
      err << "qp-info: " << (v ? "--pkey " + *p + " is not a valid P_Key" : v.error().detail)
          << "\n";
      return kExitUsage;
    }
    query->pkey = static_cast<uint16_t>(*v);
  }
  if (auto p = args.Get("sl")) {
    auto v = ParseUnsigned(*p, "--sl", 0, 15);
    if (!v) {
      err << "qp-info: " << v.error().detail << "\n";
      return kExitUsage;
    }
    query->sl = static_cast<uint8_t>(*v);
  }
  sa::ResolveOptions options;
  std::vector<std::string> notes;
  auto timeout = GetDuration(args, kTimeout, notes);
  if (!timeout) {
    err << "qp-info: " << timeout.error().detail << "\n";
    return kExitUsage;
  }
  PrintNotes("qp-info", notes, err);
  if (*timeout) {
    options.deadline = std::chrono::ceil<std::chrono::milliseconds>(**timeout);
    options.try_timeout = std::max(std::chrono::milliseconds(10), options.deadline / options.tries);
  }
  // A fresh TID per run, so a late reply to an earlier run is never taken.
  options.first_tid =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) &
      0xffffff00u;

  auto port = sa::QueryUmadPort(args.Get("ib-dev").value_or(""), port_num);
  if (!port) {
    err << "qp-info: " << port.error().ToString() << "\n";
    return ExitStatus(ExitStage::kPath, port.error());
  }
  std::unique_ptr<sa::MadChannel> channel;
  if (port->link_layer != LinkLayer::kEthernet && port->state == 4 && port->sm_lid != 0) {
    auto opened = sa::OpenUmadChannel(*port);
    if (!opened) {
      err << "qp-info: " << opened.error().ToString() << "\n";
      return kExitSa;
    }
    channel = std::move(*opened);
  }
  struct NoChannel final : sa::MadChannel {  // ResolvePath refuses before using it
    Result<void> Send(const std::array<uint8_t, sa::kMadSize>&) override {
      return Error(ErrorCode::kIo, 0, "send", "", "no channel");
    }
    Result<std::vector<uint8_t>> Receive(std::chrono::milliseconds) override {
      return Error(ErrorCode::kIo, 0, "receive", "", "no channel");
    }
  } none;
  auto record = sa::ResolvePath(channel ? *channel : static_cast<sa::MadChannel&>(none), *port,
                                *query, options);
  if (!record) {
    err << "qp-info: " << record.error().ToString() << "\n";
    return ExitStatus(ExitStage::kPath, record.error());
  }
  if (args.Has("json")) {
    nlohmann::ordered_json doc = JsonDocument();
    doc["ca"] = port->ca_name;
    doc["port"] = port->port_num;
    doc["sm_lid"] = port->sm_lid;
    doc["path"] = PathRecordToJson(*record);
    out << doc.dump(2) << "\n";
  } else {
    out << FormatPathRecordText(*port, *record);
  }
  return kExitOk;
}

}  // namespace qpconnect::tools
