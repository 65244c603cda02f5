// SPDX-License-Identifier: MIT
#include "pingpong_flow.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "findings_json.h"
#include "hex_text.h"
#include "json_document.h"
#include "preflight.h"
#include "qpconnect/connector.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/pingpong.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/traffic.h"
#include "report.h"
#include "traffic_report.h"

namespace qpconnect::tools {
namespace {

using nlohmann::ordered_json;
using Clock = oob::PingpongClock;

std::string RecordText(const oob::PingpongRecord& r) {
  return "LID " + Hex(r.lid, 4) + ", QPN " + Hex(r.qpn, 6) + ", PSN " + Hex(r.psn, 6) + ", GID " +
         GidToString(r.gid);
}

ordered_json RecordJson(const oob::PingpongRecord& r) {
  return {{"lid", r.lid},
          {"qpn", r.qpn},
          {"psn", r.psn},
          {"gid", GidToString(r.gid)},
          {"wire", oob::EncodePingpongRecord(r).substr(0, oob::kPingpongRecordBytes - 1)}};
}

class PingpongFlow {
 public:
  PingpongFlow(const ConnectOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err) {}

  int Run() {
    report_["result"] = "error";
    report_["wire"] = "pingpong";
    report_["transport"] = TransportName(o_.session.transport);
    report_["role"] = o_.client ? "client" : "server";
    report_["not_exchanged"] = NotExchanged();
    int rc = Steps();
    if (o_.json) out_ << report_.dump(2) << "\n";
    return rc;
  }

 private:
  bool Ud() const { return o_.session.transport == Transport::kUd; }

  // The options a stock peer must match by hand: none of them is on the wire.
  ordered_json NotExchanged() const {
    ordered_json j = {{"size", o_.session.message_size},
                      {"iters", o_.iters},
                      {"sl", o_.session.sl},
                      {"pkey_index", o_.session.pkey_index}};
    if (!Ud()) j["path_mtu"] = MtuBytes(o_.session.mtu.value_or(Mtu::k1024));
    return j;
  }

  // The stock option spelling of the same values, for messages.
  std::string StockOptions() const {
    std::string s =
        "-s " + std::to_string(o_.session.message_size) + " -n " + std::to_string(o_.iters);
    if (!Ud()) s += " -m " + std::to_string(MtuBytes(o_.session.mtu.value_or(Mtu::k1024)));
    if (o_.session.sl != 0) s += " -l " + std::to_string(o_.session.sl);
    return s;
  }

  void Step(const std::string& text) {
    if (o_.verbose && !o_.json) out_ << "qp-connect: " << text << "\n";
  }

  // Reports `e` as `stage` failed; returns the exit status the map gives
  // `exit_stage` and `e` (exit_codes.h).
  int Fail(const std::string& stage, const Error& e, ExitStage exit_stage,
           const std::string& hint = {}) {
    return Fail(stage, e, ExitStatus(exit_stage, e), hint);
  }
  int Fail(const std::string& stage, Error e, int code, const std::string& hint = {}) {
    if (!hint.empty()) e.detail += (e.detail.empty() ? "" : "; ") + hint;
    report_["stage"] = stage;
    report_["error"] = ErrorObject(e);
    if (!o_.json) err_ << "qp-connect: " << stage << " failed: " << e.ToString() << "\n";
    return code;
  }

  // What a traffic failure most likely means when the peer is a stock program
  // whose options we never saw.
  std::string TrafficHint(const Error& e) const {
    const std::string same =
        "the pingpong dialect does not exchange -s, -n, -m, -r or -l: run "
        "the peer with this side's values (" +
        StockOptions() + ")";
    if (e.attribute == "byte_len") {
      return "the stock peer runs with a different -s (message size; the received length is "
             "above" +
             std::string(Ud() ? ", plus the 40-byte GRH" : "") + "); " + same;
    }
    if (e.code == ErrorCode::kTimeout) {
      const long iteration = e.iteration ? static_cast<long>(*e.iteration) : -1;
      if (iteration == 0 && !o_.client) {
        return std::string(
                   "the peer's first message never arrived: most likely it runs with a "
                   "different ") +
               (Ud() ? "-s (above the path MTU, so it was dropped)"
                     : "-m (path MTU; above the active MTU its packets are dropped) or -s") +
               "; " + same;
      }
      if (iteration > 0) {
        return "the peer stopped after " + std::to_string(iteration) +
               " round trips: most likely it runs with -n " + std::to_string(iteration) +
               " (or it failed; see its output); " + same;
      }
      return "no reply from the peer: it runs with a different -m or -s, or failed (see its "
             "output); " +
             same;
    }
    return "if the peer is a stock pingpong program, check its options: " + same;
  }

  int Steps() {
    // HOST and --bind before the device: a name that does not resolve is a
    // usage error (exit 2), as in our dialect.
    if (auto fault = Preflight(o_)) return Fail(fault->stage, fault->error, ExitStage::kInput);
    auto connector = Connector::Open(o_.session);
    if (!connector) {
      Error e = connector.error();
      const int code = ExitForOpen(e);
      return Fail("open", std::move(e), code);
    }
    connector_ = std::move(*connector);
    const EndpointInfo& local = connector_->Local();
    own_ = oob::RecordFromEndpoint(local);
    report_["local"] = RecordJson(own_);
    report_["local"]["device"] = local.identity.device;
    if (local.path.sgid) report_["local"]["gid_index"] = local.path.sgid->index;
    if (!o_.json) out_ << "qp-connect: local address:  " << RecordText(own_) << "\n";
    Step("opened " + local.identity.device + ": one " + TransportName(local.transport) +
         " QP in INIT with receives posted");

    const auto deadline = Clock::now() + o_.timeout;
    oob::PingpongRecord peer;
    std::unique_ptr<oob::PingpongServer> server;
    if (o_.client) {
      oob::PingpongClientOptions c;
      c.host = *o_.host;
      c.port = o_.tcp_port;
      auto client = oob::PingpongClient::Create(c);
      if (!client) return Fail("exchange", client.error(), ExitStage::kInput);
      if (auto r = (*client)->Connect(deadline); !r)
        return Fail("exchange", r.error(), ExitStage::kExchange);
      if (auto r = (*client)->SendOwn(own_, deadline); !r) {
        return Fail("exchange", r.error(), ExitStage::kExchange);
      }
      auto p = (*client)->ReadPeer(deadline);
      if (!p) return Fail("exchange", p.error(), ExitStage::kExchange);
      peer = *p;
      if (auto r = (*client)->SendDone(deadline); !r) {
        return Fail("exchange", r.error(), ExitStage::kExchange);
      }
      peer_host_ = *o_.host;
    } else {
      oob::PingpongServerOptions s;
      s.bind_address = o_.bind_address;
      s.port = o_.tcp_port;
      auto created = oob::PingpongServer::Create(s);
      if (!created) return Fail("exchange", created.error(), ExitStage::kListen);
      server = std::move(*created);
      Step("waiting for a pingpong client on port " + std::to_string(server->port()));
      auto p = server->AcceptAndReadPeer(deadline);
      if (!p) return Fail("exchange", p.error(), ExitStage::kExchange);
      peer = *p;
      peer_host_ = server->peer_address();
    }
    report_["remote"] = RecordJson(peer);
    report_["remote"]["host"] = peer_host_;
    if (!o_.json) out_ << "qp-connect: remote address: " << RecordText(peer) << "\n";

    // Validate with what the dialect tells, and say what it could not.
    Gid local_gid = local.path.sgid ? local.path.sgid->gid : Gid{};
    remote_ = oob::EndpointFromRecord(peer, local.transport, local_gid,
                                      o_.session.mtu.value_or(Mtu::k1024), peer_host_);
    ConnectorOptions co;
    co.plan = o_.plan;
    co.plan.hop_limit = Ud() ? 64 : 1;  // the stock programs' GRH hop limits
    // The stock convention: a GRH only towards a GID with a non-zero
    // interface id. On RoCE a peer without -g therefore cannot be reached,
    // and the validator says so (grh-required, dgid-zero).
    if (!oob::PingpongUsesGrh(peer.gid)) co.grh = false;
    co.validate = o_.validate;
    auto connected = connector_->Agree(remote_, co);
    if (connected) connected = connector_->ConnectAgreed(co);
    const ConnectionPlan plan = connector_->report().plan.value_or(ConnectionPlan{});
    const std::vector<Finding>& findings = connector_->report().findings;
    report_["findings"] = FindingsToJson(findings);
    ordered_json unchecked = ordered_json::array();
    for (const auto& f : findings) {
      if (f.unchecked) unchecked.push_back(f.id);
    }
    report_["unchecked_rules"] = unchecked;
    PrintFindings(findings, unchecked);
    if (o_.dump_file) {
      if (auto w = WriteDump(*o_.dump_file, local, plan, remote_); !w) {
        return Fail("dump", w.error(), ExitStage::kInput);
      }
    }
    if (!connected && connected.error().operation == "validate") {
      report_["stage"] = "validate";
      if (!o_.json) {
        err_ << "qp-connect: the validator found errors; nothing was modified (use "
                "--no-validate to try anyway)"
             << (o_.client ? "; the stock server is left waiting for its first message\n"
                           : "; closing the connection, so the stock client fails at once\n");
      }
      return ExitStatus(ExitStage::kValidate, connected.error());
    }
    if (!connected) return Fail("connect", connected.error(), ExitStage::kConnect);
    Step("QP at RTS");
    if (server) {
      // The stock server writes its record only once its QP is at RTS, and
      // the client sends as soon as it has it.
      if (auto r = server->SendOwn(own_, deadline); !r)
        return Fail("exchange", r.error(), ExitStage::kExchange);
      if (auto r = server->ReadDone(deadline); !r)
        return Fail("exchange", r.error(), ExitStage::kExchange);
      server.reset();
    }
    if (o_.verify) {
      verbs::TrafficOptions t;
      t.iters = o_.iters;
      t.size = o_.session.message_size;
      t.timeout = o_.timeout;
      t.rdma = false;
      t.pattern = verbs::TrafficPattern::kPingpong;
      auto r = verbs::RunTraffic(*connector_->session(), remote_,
                                 o_.client ? verbs::Role::kClient : verbs::Role::kServer, t);
      if (!r) return Fail("traffic", r.error(), ExitStage::kTraffic, TrafficHint(r.error()));
      TrafficFormat f;
      f.gbits = o_.report_gbits;
      f.events = o_.session.completion_events;
      f.qpns = {own_.qpn};
      ordered_json j = TrafficSummaryJson(*r, t.size, f);
      j["content"] = o_.client ? "echo checked" : "echoed";
      report_["traffic"] = std::move(j);
      if (!o_.json) {
        out_ << "qp-connect: traffic ok: " << TrafficOkText(*r, t.size, 1) << ", "
             << (o_.client ? "echo checked" : "echoed") << "\n"
             << TrafficTable(*r, f);
      }
    }
    report_["result"] = "ok";
    report_.erase("stage");
    if (!o_.json) {
      out_ << "qp-connect: connected " << TransportName(local.transport) << " QP "
           << Hex(own_.qpn, 6) << " on " << local.identity.device << " with the pingpong peer's QP "
           << Hex(peer.qpn, 6) << " at " << peer_host_ << "\n";
    }
    return kExitOk;
  }

  void PrintFindings(const std::vector<Finding>& findings, const ordered_json& unchecked) {
    if (o_.json) return;
    for (const auto& f : findings) {
      if (f.severity == Severity::kInfo && !o_.verbose) continue;
      (f.severity == Severity::kError ? err_ : out_)
          << "qp-connect: " << FindingToString(f) << "\n";
    }
    out_ << "qp-connect: not checked: the pingpong dialect carries no MTU, message size, "
            "iteration count, SL, P_Key or version; assumed the peer uses "
         << StockOptions() << " and P_Key index 0";
    if (!unchecked.empty()) {
      out_ << "; rules not checked:";
      for (const auto& id : unchecked) out_ << " " << id.get<std::string>();
    }
    out_ << "\n";
  }

  const ConnectOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  ordered_json report_ = JsonDocument();  // schema_version first (docs/json.md)
  std::unique_ptr<Connector> connector_;
  oob::PingpongRecord own_;
  EndpointInfo remote_;
  std::string peer_host_;
};

}  // namespace

int RunPingpongFlow(const ConnectOptions& o, std::ostream& out, std::ostream& err) {
  return PingpongFlow(o, out, err).Run();
}

}  // namespace qpconnect::tools
