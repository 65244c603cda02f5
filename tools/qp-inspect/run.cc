#include "run.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cli_args.h"
#include "exit_codes.h"
#include "qpconnect/observe/sampling.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/snapshot_text.h"
#include "version.h"

namespace qpconnect::tools::inspect {
namespace {

using kernel::KernelReader;
using kernel::NlDevice;

constexpr double kDefaultInterval = 1.0;

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'d', "ib-dev", true, "NAME", "only this device (default: all)"},
    {0, "pid", true, "PID[,PID...]", "only QPs of these processes"},
    {0, "comm", true, "NAME[,NAME...]", "only QPs of processes with these command names"},
    {'j', "json", false, "", "print the snapshot as JSON (docs/inspect.md) instead of the table"},
    {'o', "output", true, "FILE",
     "write a snapshot of two samples --interval apart to FILE, for qp-validate"},
    {0, "interval", true, "SECONDS",
     "seconds between two samples (default 1 with -o; alone: show both)"},
    {'h', "help", false, "", "show this help and exit"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

std::string Help() {
  return "Usage: qp-inspect [-d NAME] [--pid PID,...] [--comm NAME,...] [--json]\n"
         "                  [-o FILE] [--interval SECONDS]\n"
         "\n"
         "Lists every RDMA queue pair on this host from the kernel's resource tracker\n"
         "(netlink RDMA_NLDEV_CMD_RES_QP_GET, what `rdma res show qp` reads): device,\n"
         "port, QP number, the peer QP number (rqpn), type, state, send and receive\n"
         "PSNs, owning pid and command, and the process's state from /proc (a stopped\n"
         "or zombie owner shows T or Z); then each port's counters (duplicate,\n"
         "out-of-sequence, retry, RNR...). With -o, two samples --interval apart are\n"
         "written as a snapshot that `qp-validate FILE` pairs and judges: moving or\n"
         "stuck, PSNs that disagree, a peer gone, a receiver not ready.\n"
         "\n"
         "Options:\n" +
         FormatOptions(Specs()) +
         "\n"
         "Privileges: none beyond reading /proc. The kernel lists the QPs of every\n"
         "process in the caller's PID namespace, kernel QPs only to the initial PID\n"
         "namespace, and devices only in network namespaces that see them. /proc\n"
         "mounted with hidepid hides other users' processes: their command and state\n"
         "show as unknown, with a note. What is hidden is said, never an empty list.\n"
         "\n"
         "Exit status: 0 listed (also when nothing matches a filter; stderr says so),\n"
         "2 bad usage or an unwritable -o file, 3 no RDMA netlink, no device or no such\n"
         "device, 6 a kernel query failed.\n";
}

int UsageError(std::ostream& err, const std::string& what) {
  err << "qp-inspect: " << what << "\nTry 'qp-inspect --help'.\n";
  return kExitUsage;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Filter {
  std::string device;
  std::set<int> pids;
  std::set<std::string> comms;

  bool Keeps(const KernelQp& q) const {
    if (!pids.empty() && pids.count(q.pid) == 0) return false;
    if (!comms.empty() && comms.count(q.comm) == 0) return false;
    return true;
  }
  bool ByProcess() const { return !pids.empty() || !comms.empty(); }
};

std::string Names(const std::vector<NlDevice>& devices) {
  std::string list;
  for (const NlDevice& d : devices) list += (list.empty() ? "" : ", ") + d.name;
  return list;
}

// An error reading the kernel, as an exit status and a message.
int KernelError(std::ostream& err, const Error& e) {
  err << "qp-inspect: " << e.ToString() << "\n";
  if (e.sys_errno == EPERM || e.sys_errno == EACCES) {
    err << "  the kernel refused the query to this user; run qp-inspect as root (or with "
           "CAP_NET_ADMIN)\n";
  }
  return ExitStatus(ExitStage::kOpen, e);  // 3 not found, else 6 (kIo, kVerbs)
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

Environment RealEnvironment(KernelReader* reader) {
  Environment env;
  env.reader = reader;
  env.monotonic_seconds = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  env.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  env.hostname = [] {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return std::string();
    return std::string(name);
  };
  env.utc_now = [] {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(buf);
  };
  return env;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::unique_ptr<KernelReader> reader = kernel::MakeNetlinkReader();
  return Run(args, RealEnvironment(reader.get()), out, err);
}

int Run(const std::vector<std::string>& args, const Environment& env, std::ostream& out,
        std::ostream& err) {
  Result<ParsedArgs> parsed = ParseArgs(args, Specs());
  if (!parsed) return UsageError(err, parsed.error().detail);
  const ParsedArgs& a = *parsed;
  if (a.Has("help")) {
    out << Help();
    return kExitOk;
  }
  if (a.Has("version")) {
    out << VersionText("qp-inspect");
    return kExitOk;
  }
  if (!a.positionals.empty())
    return UsageError(err, "unexpected argument '" + a.positionals[0] + "'");

  Filter filter;
  filter.device = a.Get("ib-dev").value_or("");
  if (auto p = a.Get("pid")) {
    for (const std::string& item : SplitList(*p)) {
      Result<unsigned long> v = ParseUnsigned(item, "--pid", 1, 0x7fffffff);
      if (!v) return UsageError(err, v.error().detail);
      filter.pids.insert(static_cast<int>(*v));
    }
    if (filter.pids.empty()) return UsageError(err, "--pid needs a process id");
  }
  if (auto c = a.Get("comm")) {
    for (const std::string& item : SplitList(*c)) filter.comms.insert(item);
    if (filter.comms.empty()) return UsageError(err, "--comm needs a command name");
  }
  const std::optional<std::string> output = a.Get("output");
  std::optional<double> interval;
  if (auto i = a.Get("interval")) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(i->c_str(), &end);
    if (i->empty() || *end != '\0' || errno != 0 || !(v >= 0.01 && v <= 3600)) {
      return UsageError(
          err, "--interval must be a number of seconds from 0.01 to 3600, not '" + *i + "'");
    }
    interval = v;
  }
  if (output && !interval) interval = kDefaultInterval;
  if (output) {
    // Fail now rather than after the samples.
    std::ofstream probe(*output, std::ios::app);
    if (!probe) {
      const int e = errno;
      err << "qp-inspect: cannot write " << *output << ": " << std::strerror(e) << "\n";
      return kExitUsage;
    }
  }

  Result<std::vector<NlDevice>> all = env.reader->Devices();
  if (!all) return KernelError(err, all.error());
  if (all->empty()) {
    err << "qp-inspect: no RDMA device visible through netlink (`rdma dev` lists none): no "
           "RDMA driver is loaded, or this network namespace does not see the devices "
           "(`rdma system show`: netns exclusive)\n";
    return kExitNoDevice;
  }
  std::vector<NlDevice> devices;
  for (const NlDevice& d : *all) {
    if (filter.device.empty() || d.name == filter.device) devices.push_back(d);
  }
  if (devices.empty()) {
    err << "qp-inspect: no device named '" << filter.device << "'; devices: " << Names(*all)
        << "\n";
    return kExitNoDevice;
  }

  Snapshot snapshot;
  snapshot.host = env.hostname();
  snapshot.tool = FirstLine(VersionText("qp-inspect"));
  snapshot.taken_at = env.utc_now();
  kernel::SamplingPlan plan;
  plan.devices = devices;
  plan.interval = interval;
  if (filter.ByProcess()) plan.keep = [&](const KernelQp& q) { return filter.Keeps(q); };
  Result<kernel::SamplingCounts> counts =
      kernel::TakeSamples(*env.reader, plan, {env.monotonic_seconds, env.sleep}, &snapshot);
  if (!counts) return KernelError(err, counts.error());
  const size_t listed_before_filter = counts->listed;
  const bool kernel_qps_seen = counts->kernel_qps_seen;
  if (listed_before_filter == 0) {
    err << "qp-inspect: the kernel's resource tracker lists no QP on " << Names(devices)
        << ". Either none exists, or they belong to processes outside this process's PID "
           "namespace";
    err << (kernel_qps_seen ? ".\n"
                            : " (not even the kernel's own QPs are listed, such as each "
                              "InfiniBand/RoCE port's QP1: they are shown only in the initial "
                              "PID namespace).\n");
  } else if (snapshot.samples.back().qps.empty()) {
    err << "qp-inspect: no QP matches";
    if (!filter.pids.empty()) err << " --pid " << a.Get("pid").value_or("");
    if (!filter.comms.empty()) err << " --comm " << a.Get("comm").value_or("");
    err << " (the tracker lists " << listed_before_filter << " QP"
        << (listed_before_filter == 1 ? "" : "s") << " on " << Names(devices) << ")\n";
  }

  if (output) {
    std::ofstream f(*output, std::ios::trunc);
    f << SnapshotToText(snapshot);
    f.close();
    if (!f) {
      const int e = errno;
      err << "qp-inspect: cannot write " << *output << ": " << std::strerror(e) << "\n";
      return kExitUsage;
    }
  }
  if (a.Has("json")) {
    out << SnapshotToText(snapshot);
  } else {
    out << FormatSnapshotText(snapshot);
    if (output)
      out << "snapshot written to " << *output << "; judge it with: qp-validate " << *output
          << "\n";
  }
  return kExitOk;
}

}  // namespace qpconnect::tools::inspect
