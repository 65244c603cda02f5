// SPDX-License-Identifier: MIT
#include "run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "duration_arg.h"  // FormatSeconds
#include "exit_codes.h"
#include "findings_json.h"
#include "gid_report.h"
#include "greeter.h"
#include "json_document.h"
#include "mesh_handoff.h"
#include "options.h"
#include "pingpong_flow.h"
#include "preflight.h"
#include "progress.h"
#include "qpconnect/connector.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/file.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/stdio.h"
#include "qpconnect/oob/tcp.h"
#include "qpconnect/sa/peer_path.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/traffic.h"
#include "report.h"
#include "sa_report.h"
#include "serve.h"
#include "traffic_report.h"
#include "usage.h"

namespace qpconnect::tools {
namespace {

using nlohmann::ordered_json;

// The most QPs a peer's description may hold for this side to read it: as
// many as --qps itself allows, so that a peer with another --qps is judged
// by the validator on both sides (exit 5, the peer told), not refused by one
// side's channel as too long. The frame stays under the channel's payload cap.
constexpr uint32_t kMaxPeerQps = 1U << 20;

// Sets up the channel (tcp: binds and listens; file: opens the directory),
// before the device is opened, so that a missing directory or bind address is
// reported as what it is.
Result<std::unique_ptr<oob::Exchanger>> MakeExchanger(const ConnectOptions& o,
                                                      std::optional<oob::Psk> psk) {
  switch (o.oob) {
    case OobKind::kTcp:
      if (o.client) {
        oob::TcpClientOptions c;
        c.host = *o.host;
        c.port = o.tcp_port;
        c.psk = psk;
        c.max_peer_qps = kMaxPeerQps;
        auto x = oob::TcpExchanger::CreateClient(c);
        if (!x) return std::move(x).error();
        return std::unique_ptr<oob::Exchanger>(std::move(*x));
      } else {
        oob::TcpServerOptions s;
        s.bind_address = o.bind_address;
        s.port = o.tcp_port;
        s.psk = psk;
        s.max_peer_qps = kMaxPeerQps;
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
      f.max_peer_qps = kMaxPeerQps;
      auto x = oob::FileExchanger::Create(f);
      if (!x) return std::move(x).error();
      return std::unique_ptr<oob::Exchanger>(std::move(*x));
    }
    case OobKind::kStdio: {
      oob::StdioOptions s;
      s.psk = psk;
      s.max_peer_qps = kMaxPeerQps;
      // Declared on the wire: two clients (or two servers) refuse each other
      // before anything is connected.
      s.role = o.client ? oob::OobRole::kClient : oob::OobRole::kServer;
      auto x = oob::StdioExchanger::Create(STDIN_FILENO, STDOUT_FILENO, s);
      if (!x) return std::move(x).error();
      return std::unique_ptr<oob::Exchanger>(std::move(*x));
    }
  }
  return Error{ErrorCode::kInvalidArgument, 0, "oob", "", "unknown channel"};
}

class Runner {
 public:
  // `progress`: draw a progress line on `err` (a terminal's stderr, no --json).
  // `peer`: --serve's peer number (1, 2, ...), 0 when not serving.
  Runner(const ConnectOptions& o, std::ostream& out, std::ostream& err, bool progress,
         unsigned peer = 0)
      : o_(o),
        out_(o.oob == OobKind::kStdio ? err : out),
        err_(err),
        progress_(err, progress),
        start_(std::chrono::steady_clock::now()),
        peer_(peer) {}

  int Run() {
    if (o_.json) report_ = JsonDocument();  // schema_version first (docs/json.md)
    Put("result", "error");
    Put("transport", TransportName(o_.session.transport));
    Put("role", o_.client ? "client" : "server");
    if (peer_ != 0) Put("peer", peer_);
    int rc = Steps();
    if (peer_ != 0 && ServeSignal() != 0 && rc != kExitOk) ReleaseOnSignal();
    if (o_.json && !(peer_ != 0 && no_peer_)) {
      // Serving: one document per line (JSON Lines), one per peer.
      out_ << (peer_ != 0 ? report_.dump() : report_.dump(2)) << "\n";
    }
    return rc;
  }

  // --serve: no peer came (the accept timed out or was interrupted); not a
  // peer to count or report.
  bool no_peer() const { return no_peer_; }
  // Failed before the exchange started: this side cannot serve anyone.
  bool failed_before_exchange() const { return !exchange_started_; }

 private:
  // A -v step, written and flushed as it happens (the progress line, if
  // any, erased first).
  void Step(std::string_view text) {
    if (!o_.verbose || o_.json) return;
    progress_.Clear();
    out_ << "qp-connect: " << text << std::endl;
  }

  // The --json report: `key` set to `value` (or to what `value()` returns),
  // only when the report will be printed. Without --json nothing of it is
  // built: at N = 1 the report was 4,300 distinct instructions and 100,000
  // executed ones of a client's run (SideJson, TimingsJson, the findings,
  // nlohmann's own code; valgrind --tool=callgrind in the lab), code the
  // lab's emulator translates afresh in every process (issue 15,
  // docs/performance.md).
  template <class T>
  void Put(const char* key, T&& value) {
    if (!o_.json) return;
    if constexpr (std::is_invocable_v<T>) {
      report_[key] = value();
    } else {
      report_[key] = std::forward<T>(value);
    }
  }

  // The device's provider library (-v, and "provider" in --json): whether
  // the provider cache let it load before the device list (docs/cli.md).
  void ReportProvider(const verbs::ProviderNote& p) {
    if (p.library.empty()) return;
    Put("provider", [&] {
      return ordered_json{
          {"library", p.library}, {"preloaded", p.preloaded}, {"cache_refused", p.refused}};
    });
    Step("provider library " + p.library +
         (p.preloaded ? " (from the provider cache: loaded before the device list)" : ""));
    for (const std::string& r : p.refused) Step("provider cache entry not loaded: " + r);
    if (!p.cache_error.empty()) Step("provider cache not updated: " + p.cache_error);
  }

  // Reports `e` as `stage` failed; returns the exit status the map gives
  // `exit_stage` and `e` (exit_codes.h).
  int Fail(const std::string& stage, const Error& e, ExitStage exit_stage) {
    return Fail(stage, e, ExitStatus(exit_stage, e));
  }
  int Fail(const std::string& stage, const Error& e, int code) {
    progress_.Clear();
    Put("stage", stage);
    Put("error", [&] { return ErrorObject(e); });
    if (!o_.json && !no_peer_) {
      err_ << "qp-connect: " << PeerPrefix() << stage << " failed: " << e.ToString() << "\n";
    }
    return code;
  }

  // "peer K: " when serving.
  std::string PeerPrefix() const {
    return peer_ != 0 ? "peer " + std::to_string(peer_) + ": " : "";
  }

  // --serve, a signal during this peer: its QPs released (the connector
  // destroyed) and the peer, if one is connected, told.
  void ReleaseOnSignal() {
    connector_.reset();
    AbortPeer("server interrupted");
    if (no_peer_) return;
    Put("interrupted", ServeSignalName(ServeSignal()));
    if (!o_.json) {
      err_ << "qp-connect: " << PeerPrefix() << "interrupted by " << ServeSignalName(ServeSignal())
           << ": its QPs released; the peer told (or its connection closed)\n";
    }
  }

  double MsSinceStart() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

  // Tells the peer we stop, so it fails promptly instead of waiting for its
  // deadline (the connector does this itself for its own phases).
  // Serving and interrupted: the reason is the signal, and the waits the
  // signal stopped run again for this one message.
  void AbortPeer(const std::string& why) {
    if (!exchanger_ || aborted_) return;
    aborted_ = true;
    if (peer_ != 0 && ServeSignal() != 0) {
      ResumeWaitsAfterSignal();
      exchanger_->Abort(std::string("server interrupted (") + ServeSignalName(ServeSignal()) + ")",
                        std::chrono::milliseconds(2000));
      return;
    }
    exchanger_->Abort(why, std::chrono::milliseconds(2000));
  }

  // What the connector learned, into the report (and the findings printed
  // once, before anything is modified).
  void Record(const ConnectReport& r) {
    if (r.remote && !remote_recorded_) {
      remote_recorded_ = true;
      Put("remote", [&] { return SideJson(*r.remote); });
    }
    if (r.sa_path && r.plan && !path_recorded_) {
      path_recorded_ = true;
      RecordPath(*r.sa_path, *r.plan);
    }
    if (r.gid_pair && !gid_pair_shown_) {
      gid_pair_shown_ = true;
      if (!o_.json) out_ << GidPairLine(*r.gid_pair);
    }
    if (r.roce_path && !roce_path_shown_) {
      roce_path_shown_ = true;
      if (!o_.json) out_ << "qp-connect: RoCE path: " << RocePathText(*r.roce_path) << "\n";
    }
    if (r.plan && !findings_shown_) {
      findings_shown_ = true;
      Put("findings", [&] { return FindingsToJson(r.findings); });
      if (!o_.json) PrintFindings(r.findings);
      for (const auto& f : r.findings) {
        if (f.severity == Severity::kError &&
            std::find(error_rules_.begin(), error_rules_.end(), f.id) == error_rules_.end()) {
          error_rules_.push_back(f.id);
        }
      }
    }
  }

  // --path sa: the SA's record and what the plan took from it, always shown
  // (the user asked where the path comes from).
  void RecordPath(const PathRecord& p, const ConnectionPlan& plan) {
    Put("path", [&] {
      return ordered_json{
          {"source", "sa"}, {"record", PathRecordToJson(p)}, {"applied", plan.from_sa}};
    });
    if (o_.json) return;
    std::string applied;
    for (const auto& a : plan.from_sa) applied += (applied.empty() ? "" : ", ") + a;
    char line[320];
    std::snprintf(line, sizeof line,
                  "qp-connect: path from the subnet administrator: DLID 0x%04x, SL %u, MTU %d, "
                  "rate %.1f Gb/s, packet lifetime %u -> ACK timeout %u, hop limit %u; applied: "
                  "%s\n",
                  unsigned{p.dlid}, unsigned{p.sl}, MtuBytes(p.mtu), RateGbps(p.rate),
                  unsigned{p.packet_lifetime},
                  unsigned{AckTimeoutForPacketLifetime(p.packet_lifetime)}, unsigned{p.hop_limit},
                  applied.empty() ? "nothing" : applied.c_str());
    out_ << line;
  }

  // The connector's failure as qp-connect's stage and exit status.
  int FailConnect(const Error& e) {
    const ConnectReport& r = connector_->report();
    Record(r);
    if (o_.dump_file && r.plan) WriteDumpOrFail();
    switch (r.reached) {
      case ConnectPhase::kOpen:
      case ConnectPhase::kExchange:
        // Serving: no client within --timeout (or a signal while waiting for
        // one) is no peer; the loop listens again.
        no_peer_ = peer_ != 0 && e.operation.rfind("accept on port", 0) == 0;
        return Fail("exchange", e, ExitStage::kExchange);
      case ConnectPhase::kValidate:
        if (path_failed_) return Fail("path", e, ExitStage::kPath);
        if (e.operation == "validate") {
          Put("stage", "validate");
          if (!o_.json) {
            err_ << "qp-connect: the validator found errors; nothing was modified (use "
                    "--no-validate to try anyway)\n";
          }
          return ExitStatus(ExitStage::kValidate, e);
        }
        return Fail("connect", e, ExitStage::kValidate);
      case ConnectPhase::kConnect:
        return Fail("connect", e, ExitStage::kConnect);
      case ConnectPhase::kBarrier:
        return Fail("barrier", e, ExitStage::kBarrier);
    }
    return Fail("connect", e, ExitStage::kConnect);
  }

  // REQUIRES: the connector planned.
  bool WriteDumpOrFail() {
    const ConnectReport& r = connector_->report();
    if (auto w = WriteDump(*o_.dump_file, r.local, *r.plan, *r.remote); !w) {
      dump_error_ = w.error();
      return false;
    }
    return true;
  }

  // The run, in the order the steps happen. Each step returns its failure's
  // exit status, or nothing when the run goes on.
  int Steps() {
    if (auto failed = OpenChannel()) return *failed;
    if (auto failed = OpenDevice()) return *failed;
    exchange_started_ = true;
    auto connected = connector_->Connect(*exchanger_, ConnectorOptionsForRun());
    if (!connected) return FailConnect(connected.error());
    const double to_barrier_ms = MsSinceStart();
    progress_.Clear();
    const ConnectReport& r = *connected;
    Record(r);
    if (o_.dump_file && !WriteDumpOrFail()) {
      AbortPeer("could not write the dump file");
      return Fail("dump", *dump_error_, ExitStage::kInput);
    }
    TrafficTimes times;
    if (o_.verify) {
      if (auto failed = ProveWithTraffic(*r.remote, times)) return *failed;
    }
    ReportConnected(r, times, to_barrier_ms);
    return kExitOk;
  }

  // Preflight, the key and the channel (tcp: binds and listens), before the
  // device: the dump file, HOST, the key, the directory, the bind address
  // are then usage errors naming them (exit 2), not the device's (3) or the
  // exchange's (4).
  std::optional<int> OpenChannel() {
    if (auto fault = Preflight(o_)) return Fail(fault->stage, fault->error, ExitStage::kInput);
    std::optional<oob::Psk> psk;
    if (o_.psk_file) {
      // Missing, unreadable, too open or too short: an unusable input file.
      auto k = oob::LoadPsk(*o_.psk_file);
      if (!k) return Fail("exchange", k.error(), ExitStage::kInput);
      psk = std::move(*k);
    }
    auto x = MakeExchanger(o_, std::move(psk));
    if (!x) return Fail("exchange", x.error(), ExitStage::kChannel);
    exchanger_ = std::move(*x);
    return std::nullopt;
  }

  // Opens the device (its QPs in INIT, receives posted) while a tcp client
  // greets the server, and reports this side.
  std::optional<int> OpenDevice() {
    // A tcp client connects to the server and greets it while the device
    // opens (issue 15): in the lab the connect and the hellos take 20-40 ms
    // and the device list alone (libibverbs loading its providers) 45 ms.
    // The exchange then only swaps descriptions.
    Greeter greeter(exchanger_.get(), o_.oob == OobKind::kTcp && o_.client, o_.timeout);

    Step("opening " +
         (o_.session.device.empty() ? std::string("the first device") : o_.session.device) + ": " +
         std::to_string(o_.session.num_qps) + " " + TransportName(o_.session.transport) +
         " QP(s) to create");
    verbs::SessionOptions so = o_.session;
    so.on_progress = [this](std::string_view step, size_t done, size_t total) {
      progress_.Update(step, done, total);
    };
    auto connector = Connector::Open(so);
    if (!connector) {
      Error e = connector.error();
      const int code = ExitForOpen(e);
      // The greeting stops at once, and a server already greeted is told.
      greeter.Cancel("the client could not open its device: " + e.ToString());
      aborted_ = true;
      return Fail("open", e, code);
    }
    connector_ = std::move(*connector);
    if (auto greeted = greeter.Wait(); !greeted) {
      Step("could not reach the server: " + greeted.error().ToString());
      return Fail("exchange", greeted.error(), ExitStage::kExchange);
    }
    report_greet_ms_ = greeter.ms();
    const EndpointInfo& local = connector_->Local();
    Put("local", [&] { return SideJson(local); });
    Step("opened " + local.identity.device + ": " + std::to_string(local.qps.size()) + " " +
         TransportName(local.transport) + " QP(s) in INIT with receives posted");
    if (const verbs::Session* session = connector_->session()) ReportProvider(session->provider());
    if (o_.path == PathKind::kSa && local.port.link_layer == LinkLayer::kEthernet) {
      // Known before the exchange: refused as a usage error.
      return Fail("path",
                  Error{ErrorCode::kInvalidArgument, 0, "command line", "--path",
                        "--path sa: " + local.identity.device + " port " +
                            std::to_string(local.port.port_num) +
                            " is Ethernet (RoCE), which has no subnet administrator; its paths "
                            "come from the GID and the IP route (drop --path sa)"},
                  ExitStage::kInput);
    }
    return std::nullopt;
  }

  // The connector's options: the plan, --path sa's source, the deadline, the
  // gate, and the -v steps.
  ConnectorOptions ConnectorOptionsForRun() {
    ConnectorOptions co;
    co.plan = o_.plan;
    if (o_.path == PathKind::kSa) {
      sa::PeerPathOptions po;
      if (o_.sl_given) po.sl = o_.session.sl;
      po.resolve.deadline = std::min<std::chrono::milliseconds>(o_.timeout, po.resolve.deadline);
      co.path_source = [this, po](const EndpointInfo& l, const EndpointInfo& r) {
        Step("asking the subnet administrator for the path to " + r.identity.host);
        auto path = sa::ResolvePeerPath(l, r, po);
        path_failed_ = !path;
        return path;
      };
    }
    co.timeout = o_.timeout;
    co.validate = o_.validate;
    co.before_rtr = PauseBeforeRtrFromEnv();
    co.on_step = [this](ConnectPhase phase, std::string_view what) {
      if (phase == ConnectPhase::kConnect) Record(connector_->report());
      if (phase != ConnectPhase::kValidate && what != "exchanging descriptions") Step(what);
    };
    return co;
  }

  // How long the proof took: the traffic, then the final barrier.
  struct TrafficTimes {
    double traffic_ms = 0;
    double final_barrier_ms = 0;
  };

  // The traffic's options: -n or -D, -s, -a, and the watch on the peer (and,
  // serving, on the signals).
  verbs::TrafficOptions TrafficOptionsForRun() {
    verbs::TrafficOptions t;
    t.iters = o_.iters;
    t.size = o_.session.message_size;
    t.timeout = o_.timeout;
    if (o_.duration) t.duration = *o_.duration;
    t.sweep = o_.sweep;
    // A peer that died or gave up, or whose proof failed, is noticed within
    // about 100 ms, not at the completion deadline; a wait with no
    // completion ends after the QP's retry budget and a grace (the witness).
    t.watch = [this] { return witness_->Watch(*exchanger_); };
    t.stall = witness_->stall();
    t.trace = &trace_;
    if (peer_ != 0) {
      // Serving: a signal ends the traffic at its next wait, not after -n
      // rounds or -D seconds: the signal is looked at on every wait that
      // does not complete at once (with -e: every 1 ms of a wait, so that
      // it still sleeps in poll()), the peer still every 100 ms.
      t.watch_interval = std::chrono::milliseconds(o_.session.completion_events ? 1 : 0);
      t.watch = [this, next = std::chrono::steady_clock::time_point{}]() mutable -> Result<void> {
        if (ServeSignal() != 0) {
          return Error{ErrorCode::kIo, 0, "serve", "",
                       std::string("interrupted by ") + ServeSignalName(ServeSignal())};
        }
        const auto now = std::chrono::steady_clock::now();
        if (now < next) return Ok();
        next = now + std::chrono::milliseconds(100);
        return witness_->Watch(*exchanger_);
      };
    }
    t.on_progress = [this](std::string_view step, size_t done, size_t total) {
      progress_.Update(step, done, total);
    };
    return t;
  }

  // The proof: the traffic on every QP, its report, then the final barrier
  // (neither side tears down before the other finished checking).
  std::optional<int> ProveWithTraffic(const EndpointInfo& remote, TrafficTimes& times) {
    verbs::Session& session = *connector_->session();
    Step("traffic: " +
         (o_.duration ? FormatSeconds(*o_.duration) + " of rounds"
                      : std::to_string(o_.iters) + " round(s)") +
         (o_.sweep ? " per size" : "") + " on each of " + std::to_string(session.num_qps()) +
         " QP(s)");
    const auto traffic_start = std::chrono::steady_clock::now();
    witness_.emplace(connector_->BeginProof());
    Step("traffic proof: " + witness_->budget().Text() + "; a wait stalls after " +
         std::to_string(witness_->stall().count()) + " ms");
    const verbs::TrafficOptions t = TrafficOptionsForRun();
    auto tr = verbs::RunTraffic(session, remote,
                                o_.client ? verbs::Role::kClient : verbs::Role::kServer, t);
    progress_.Clear();
    if (!tr && witness_->Explains(trace_)) return FailProof(tr.error());
    if (!tr) {
      AbortPeer("traffic failed: " + tr.error().ToString());
      return Fail("traffic", tr.error(), ExitStage::kTraffic);
    }
    RecordTraffic(t, *tr, session);
    const auto barrier_start = std::chrono::steady_clock::now();
    times.traffic_ms =
        std::chrono::duration<double, std::milli>(barrier_start - traffic_start).count();
    if (auto b = exchanger_->Barrier("done", o_.timeout); !b) {
      return Fail("final barrier", b.error(), ExitStage::kBarrier);
    }
    times.final_barrier_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - barrier_start)
            .count();
    return std::nullopt;
  }

  // The proof failed with a cause the witness explains (a failed completion,
  // a stall, or the peer's failed proof): both sides' counters traded and
  // where the packets stop named; exit 10 when the path lost them, else 7.
  int FailProof(Error e) {
    verbs::ProofOutcome out = witness_->Explain(trace_, *exchanger_);
    if (!error_rules_.empty()) {
      // --no-validate went on past errors the validator found: those, not the
      // path, are the first explanation of lost packets (a Q_Key mismatch
      // drops datagrams before any counter counts them).
      std::string rules;
      for (const auto& id : error_rules_) rules += (rules.empty() ? "" : ", ") + id;
      out.verdict.text = "the validator's findings above (" + rules +
                         ") explain it before the path does; as observed: " + out.verdict.text;
      out.verdict.path_broken = false;
    }
    // After a trade the peer may still be reading it: no abort then.
    if (out.remote) aborted_ = true;
    AbortPeer("traffic failed: " + e.ToString());
    if (out.local.cause == ProofCause::kPeerFailed) {
      e.detail = "the peer's proof failed";  // not "went away": it told us
    }
    const std::string when = "reported " + std::to_string(out.after_budget_ms) +
                             " ms after the retry budget (" + out.budget.Text() + ") ran out";
    Put("proof", [&] {
      ordered_json j{{"cause", ProofCauseName(out.verdict.cause)},
                     {"path_broken", out.verdict.path_broken},
                     {"explanation", out.verdict.text},
                     {"counters", out.verdict.counters},
                     {"retry_budget_ms",
                      std::chrono::duration<double, std::milli>(out.budget.Total()).count()},
                     {"after_budget_ms", out.after_budget_ms},
                     {"peer_answered", out.remote.has_value()}};
      if (!out.peer_silence.empty()) j["peer_silence"] = out.peer_silence;
      return j;
    });
    if (!o_.json) {
      err_ << "qp-connect: " << PeerPrefix() << "proof failed: " << out.verdict.text << " (" << when
           << ")\n";
      for (const std::string& line : out.verdict.counters) {
        err_ << "qp-connect: " << PeerPrefix() << "port counters over the proof: " << line << "\n";
      }
      if (!out.peer_silence.empty()) {
        err_ << "qp-connect: " << PeerPrefix()
             << "the peer's counters are unknown: " << out.peer_silence << "\n";
      }
    }
    return Fail("traffic", e, out.verdict.path_broken ? ExitStage::kPathLoss : ExitStage::kTraffic);
  }

  // Connected: the --json report's figures, or the "connected" line.
  void ReportConnected(const ConnectReport& r, const TrafficTimes& times, double to_barrier_ms) {
    if (o_.json) {
      RecordSuccess(r, times.traffic_ms, times.final_barrier_ms, to_barrier_ms);
      return;
    }
    const verbs::Session& session = *connector_->session();
    const EndpointInfo& local = connector_->Local();
    const EndpointInfo& remote = *r.remote;
    out_ << "qp-connect: " << PeerPrefix() << "connected " << session.num_qps() << " "
         << TransportName(session.transport()) << " QP(s): " << local.identity.device << " qpn 0x"
         << std::hex << local.qps[0].qpn << " <-> " << remote.identity.device << " qpn 0x"
         << remote.qps[0].qpn << std::dec << "\n";
  }

  // --json, a connection made: the timings, the exchange's figures, the
  // peak resident set, and "result": "ok".
  void RecordSuccess(const ConnectReport& r, double traffic_ms, double final_barrier_ms,
                     double to_barrier_ms) {
    ordered_json timings = TimingsJson(r.timings);
    timings["traffic"] = traffic_ms;
    timings["final_barrier"] = final_barrier_ms;
    timings["to_barrier"] = to_barrier_ms;  // from the start of Run() past the barrier
    // A tcp client's connect and hellos, overlapped with "open" (Greeter).
    if (report_greet_ms_) timings["greet"] = *report_greet_ms_;
    report_["timings_ms"] = std::move(timings);
    report_["per_qp_us"] = PerQpJson(r.timings);
    // The exchange: descriptions as encoded by the codec (the frame payload
    // before any sealing), and the waits for the peer (the exchange, the
    // barrier after RTS and, with traffic, the final one).
    // Measured, not computed: the peak resident set of this process so far
    // (the whole process: libraries, buffers, the QPs' mapped queues).
    rusage ru{};
    if (getrusage(RUSAGE_SELF, &ru) == 0) report_["max_rss_kib"] = ru.ru_maxrss;
    // frames_* and bytes_*: what the exchanger really moved (Exchanger::
    // stats(): frames with header, payload and trailer; hellos, descriptions,
    // barriers), so far, the final barrier included.
    const ExchangeStats moved = exchanger_->stats();
    report_["exchange"] = {{"round_trips", r.timings.round_trips + (o_.verify ? 1U : 0U)},
                           {"description_bytes_sent", oob::EncodeBinary(r.local).size()},
                           {"description_bytes_received", oob::EncodeBinary(*r.remote).size()},
                           {"frames_sent", moved.frames_sent},
                           {"frames_received", moved.frames_received},
                           {"bytes_sent", moved.bytes_sent},
                           {"bytes_received", moved.bytes_received}};
    report_["result"] = "ok";
    report_.erase("stage");
  }

  // The traffic's report: JSON, or the "traffic ok" line and the table.
  void RecordTraffic(const verbs::TrafficOptions& t, const verbs::TrafficReport& tr,
                     const verbs::Session& session) {
    TrafficFormat f;
    f.gbits = o_.report_gbits;
    f.events = o_.session.completion_events;
    for (const auto& q : session.Local().qps) f.qpns.push_back(q.qpn);
    if (o_.json) {
      ordered_json j = TrafficSummaryJson(tr, t.size, f);
      j["mode"] = o_.duration ? "duration" : "iters";
      if (o_.duration) {
        // A whole number of seconds stays an integer, as before fractions were read.
        if (o_.duration->count() % 1000 == 0) {
          j["duration_s"] = o_.duration->count() / 1000;
        } else {
          j["duration_s"] = std::chrono::duration<double>(*o_.duration).count();
        }
      }
      j["sweep"] = o_.sweep;
      j["rdma_write_checked"] = tr.rdma_write_checked;
      j["rdma_read_checked"] = tr.rdma_read_checked;
      report_["traffic"] = std::move(j);
      return;
    }
    std::string checked = tr.rdma_write_checked ? ", RDMA WRITE checked" : "";
    if (tr.rdma_read_checked) checked += ", RDMA READ checked";
    out_ << "qp-connect: traffic ok: " << TrafficOkText(tr, t.size, session.num_qps()) << checked
         << "\n"
         << TrafficTable(tr, f);
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
  ProgressLine progress_;
  std::chrono::steady_clock::time_point start_;
  ordered_json report_;  // --json only (Put); JsonDocument() at the start of Run()
  std::unique_ptr<Connector> connector_;
  std::unique_ptr<oob::Exchanger> exchanger_;
  std::optional<verbs::ProofWitness> witness_;  // during and after the traffic proof
  verbs::ProofTrace trace_;                     // what a failed proof left
  unsigned peer_ = 0;                           // --serve: this peer's number; 0 otherwise
  bool no_peer_ = false;                        // --serve: no client came
  bool exchange_started_ = false;               // Connect() was called
  std::optional<double> report_greet_ms_;       // Greeter::ms() when it ran
  bool aborted_ = false;                        // the peer was told (once)
  bool findings_shown_ = false;
  std::vector<std::string> error_rules_;  // the rules of the error findings (Record)
  bool gid_pair_shown_ = false;           // Record(): the GID pair line printed
  bool roce_path_shown_ = false;          // Record(): the RoCE path line printed
  bool path_failed_ = false;              // --path sa: the SA query failed
  bool remote_recorded_ = false;          // Record(): the peer's side is in the report
  bool path_recorded_ = false;            // Record(): the SA's path is in the report
  std::optional<Error> dump_error_;
};

}  // namespace

int RunQpConnect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (auto handed = HandOffToMesh(args, err)) return *handed;  // --oob mpi: qp-mesh
  auto o = ParseConnectOptions(args);
  if (!o) return UsageError("qp-connect", err, o.error().detail);
  if (o->help) {
    out << ConnectHelp();
    return kExitOk;
  }
  if (o->version) {
    out << ConnectVersion();
    return kExitOk;
  }
  PrintNotes("qp-connect", o->notes, err);
  if (o->gen_psk) {
    if (auto w = oob::GeneratePskFile(*o->gen_psk); !w) {
      err << "qp-connect: --gen-psk: " << w.error().ToString() << "\n";
      return ExitStatus(ExitStage::kKeyFile, w.error());
    }
    out << "qp-connect: wrote a fresh " << oob::kGeneratedPskBytes << "-byte key to " << *o->gen_psk
        << " (mode 0600); copy it to the peer and give both sides --psk-file\n";
    return kExitOk;
  }
  if (o->wire == WireKind::kPingpong) return RunPingpongFlow(*o, out, err);
  // Only the process's own stderr, when it is a terminal, gets a progress line.
  const bool progress = &err == &std::cerr && StderrWantsProgress(o->json);
  if (o->serve) {
    return ServePeers(*o, out, err, [&](unsigned peer) {
      Runner runner(*o, out, err, progress, peer);
      PeerOutcome r;
      r.status = runner.Run();
      r.no_peer = runner.no_peer();
      r.fatal = r.status != kExitOk && runner.failed_before_exchange();
      return r;
    });
  }
  return Runner(*o, out, err, progress).Run();
}

}  // namespace qpconnect::tools
