#include "run.h"

#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "findings_json.h"
#include "options.h"
#include "pingpong_flow.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/file.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/stdio.h"
#include "qpconnect/oob/tcp.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/traffic.h"
#include "report.h"

namespace qpconnect::tools {
namespace {

using nlohmann::ordered_json;

Result<std::unique_ptr<oob::Exchanger>> MakeExchanger(const ConnectOptions& o) {
  std::optional<oob::Psk> psk;
  if (o.psk_file) {
    auto k = oob::LoadPsk(*o.psk_file);
    if (!k) return std::move(k).error();
    psk = std::move(*k);
  }
  switch (o.oob) {
    case OobKind::kTcp:
      if (o.client) {
        oob::TcpClientOptions c;
        c.host = *o.host;
        c.port = o.tcp_port;
        c.psk = psk;
        auto x = oob::TcpExchanger::CreateClient(c);
        if (!x) return std::move(x).error();
        return std::unique_ptr<oob::Exchanger>(std::move(*x));
      } else {
        oob::TcpServerOptions s;
        s.bind_address = o.bind_address;
        s.port = o.tcp_port;
        s.psk = psk;
        auto x = oob::TcpExchanger::CreateServer(s);
        if (!x) return std::move(x).error();
        return std::unique_ptr<oob::Exchanger>(std::move(*x));
      }
    case OobKind::kFile: {
      oob::FileOptions f;
      f.directory = o.oob_dir;
      f.session = o.oob_session;
      f.role = o.client ? "client" : "server";
      f.peer_role = o.client ? "server" : "client";
      f.psk = psk;
      auto x = oob::FileExchanger::Create(f);
      if (!x) return std::move(x).error();
      return std::unique_ptr<oob::Exchanger>(std::move(*x));
    }
    case OobKind::kStdio: {
      oob::StdioOptions s;
      s.psk = psk;
      auto x = oob::StdioExchanger::Create(STDIN_FILENO, STDOUT_FILENO, s);
      if (!x) return std::move(x).error();
      return std::unique_ptr<oob::Exchanger>(std::move(*x));
    }
  }
  return Error{ErrorCode::kInvalidArgument, 0, "oob", "", "unknown channel"};
}

class Runner {
 public:
  Runner(const ConnectOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(o.oob == OobKind::kStdio ? err : out), err_(err) {}

  int Run() {
    report_["result"] = "error";
    report_["transport"] = TransportName(o_.session.transport);
    report_["role"] = o_.client ? "client" : "server";
    int rc = Steps();
    if (o_.json) out_ << report_.dump(2) << "\n";
    return rc;
  }

 private:
  void Step(const std::string& text) {
    if (o_.verbose && !o_.json) out_ << "qp-connect: " << text << "\n";
  }

  int Fail(const std::string& stage, const Error& e, int code) {
    report_["stage"] = stage;
    report_["error"] = ErrorJson(e);
    if (!o_.json) err_ << "qp-connect: " << stage << " failed: " << e.ToString() << "\n";
    return code;
  }

  // Tells the peer we stop at `stage`, so it fails promptly instead of waiting
  // for its deadline.
  void AbortPeer(const std::string& why) {
    if (exchanger_) exchanger_->Abort(why, std::chrono::milliseconds(2000));
  }

  int Steps() {
    auto session = verbs::Session::Open(o_.session);
    if (!session) return Fail("open", session.error(), ExitFor(session.error(), kExitVerbs));
    session_ = std::move(*session);
    const EndpointInfo& local = session_->Local();
    report_["local"] = SideJson(local);
    Step("opened " + local.identity.device + ": " + std::to_string(local.qps.size()) + " " +
         TransportName(local.transport) + " QP(s) in INIT with receives posted");

    auto x = MakeExchanger(o_);
    if (!x) return Fail("exchange", x.error(), ExitFor(x.error(), kExitExchange));
    exchanger_ = std::move(*x);
    auto peer = exchanger_->Exchange(local, o_.timeout);
    if (!peer) return Fail("exchange", peer.error(), kExitExchange);
    remote_ = std::move(*peer);
    report_["remote"] = SideJson(remote_);
    Step("received the peer's description: " + remote_.identity.host + " " +
         remote_.identity.device);

    ConnectionPlan plan = PlanConnection(local, remote_, o_.plan);
    std::vector<Finding> findings = Validate({&local, &remote_, plan, std::nullopt});
    report_["findings"] = FindingsToJson(findings);
    if (!o_.json) PrintFindings(findings);
    if (o_.dump_file) {
      if (auto w = WriteDump(*o_.dump_file, local, plan, remote_); !w) {
        return Fail("dump", w.error(), kExitUsage);
      }
    }
    if (HasErrors(findings) && o_.validate) {
      AbortPeer("validation failed");
      report_["stage"] = "validate";
      if (!o_.json) {
        err_ << "qp-connect: the validator found errors; nothing was modified (use "
                "--no-validate to try anyway)\n";
      }
      return kExitValidation;
    }
    std::string hint = HasErrors(findings) ? "the validator reported errors above" : "";
    if (plan.qps.size() != session_->num_qps()) {
      Error e{ErrorCode::kIncompatible, 0, "connect", "qps",
              "this side has " + std::to_string(session_->num_qps()) + " QPs, the peer " +
                  std::to_string(remote_.qps.size()) + " (use the same --qps on both sides)"};
      AbortPeer("qp count differs");
      return Fail("connect", e, kExitValidation);
    }
    if (auto c = session_->Connect(plan, remote_, hint); !c) {
      AbortPeer("modify failed");
      return Fail("connect", c.error(), kExitVerbs);
    }
    Step("all QPs at RTS; waiting for the peer (barrier)");
    if (auto b = exchanger_->Barrier("rts", o_.timeout); !b) {
      return Fail("barrier", b.error(), kExitExchange);
    }
    if (o_.verify) {
      verbs::TrafficOptions t;
      t.iters = o_.iters;
      t.size = o_.session.message_size;
      t.timeout = o_.timeout;
      auto r = verbs::RunTraffic(*session_, remote_,
                                 o_.client ? verbs::Role::kClient : verbs::Role::kServer, t);
      if (!r) {
        AbortPeer("traffic failed: " + r.error().ToString());
        return Fail("traffic", r.error(), kExitTraffic);
      }
      report_["traffic"] = {{"iters", t.iters},
                            {"size", t.size},
                            {"messages", r->messages},
                            {"seconds", r->seconds},
                            {"avg_rtt_us", r->avg_rtt_us},
                            {"mbit_per_s", r->mbit_per_s},
                            {"rdma_write_checked", r->rdma_write_checked},
                            {"rdma_read_checked", r->rdma_read_checked}};
      if (!o_.json) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "qp-connect: traffic ok: %u x %u bytes on %zu QP(s), %.1f us/round trip, "
                      "%.1f Mbit/s%s%s\n",
                      t.iters, t.size, session_->num_qps(), r->avg_rtt_us, r->mbit_per_s,
                      r->rdma_write_checked ? ", RDMA WRITE checked" : "",
                      r->rdma_read_checked ? ", RDMA READ checked" : "");
        out_ << line;
      }
      // Neither side tears down before the other finished checking.
      if (auto b = exchanger_->Barrier("done", o_.timeout); !b) {
        return Fail("final barrier", b.error(), kExitExchange);
      }
    }
    report_["result"] = "ok";
    report_.erase("stage");
    if (!o_.json) {
      out_ << "qp-connect: connected " << session_->num_qps() << " "
           << TransportName(session_->transport()) << " QP(s): " << local.identity.device
           << " qpn 0x" << std::hex << local.qps[0].qpn << " <-> " << remote_.identity.device
           << " qpn 0x" << remote_.qps[0].qpn << std::dec << "\n";
    }
    return kExitOk;
  }

  void PrintFindings(const std::vector<Finding>& findings) {
    for (const auto& f : findings) {
      if (f.severity == Severity::kInfo && !o_.verbose) continue;
      (f.severity == Severity::kError ? err_ : out_)
          << "qp-connect: " << FindingToString(f) << "\n";
    }
  }

  const ConnectOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  ordered_json report_ = ordered_json::object();
  std::unique_ptr<verbs::Session> session_;
  std::unique_ptr<oob::Exchanger> exchanger_;
  EndpointInfo remote_;
};

}  // namespace

int RunQpConnect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto o = ParseConnectOptions(args);
  if (!o) {
    err << "qp-connect: " << o.error().detail << "\nTry 'qp-connect --help'.\n";
    return kExitUsage;
  }
  if (o->help) {
    out << ConnectHelp();
    return kExitOk;
  }
  if (o->wire == WireKind::kPingpong) return RunPingpongFlow(*o, out, err);
  return Runner(*o, out, err).Run();
}

}  // namespace qpconnect::tools
