// SPDX-License-Identifier: MIT
#include "run.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cli_args.h"
#include "duration_arg.h"
#include "exit_codes.h"
#include "qpconnect/observe/job_hosts.h"
#include "qpconnect/observe/published_peers.h"
#include "qpconnect/observe/sampling.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/snapshot_text.h"
#include "usage.h"
#include "version.h"

namespace qpconnect::tools::inspect {
namespace {

constexpr std::string_view kTool = "qp-inspect";

using kernel::KernelReader;
using kernel::NlDevice;

constexpr double kDefaultInterval = 1.0;

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'d', "ib-dev", true, "NAME[,NAME...]",
     "only these devices (default: all); under qp-inspect-mpi, local rank r takes the r-th, "
     "round-robin (as qp-mesh --devices)"},
    {0, "pid", true, "PID[,PID...]", "only QPs of these processes"},
    {0, "comm", true, "NAME[,NAME...]", "only QPs of processes with these command names"},
    {'j', "json", false, "", "print the snapshot as JSON (docs/inspect.md) instead of the table"},
    {'o', "output", true, "FILE",
     "write a snapshot of two samples --interval apart to FILE, for qp-validate"},
    {0, "interval", true, "SECONDS",
     "time between two samples (0.01..3600; default 1 with -o; alone: show both)"},
    {0, "at", true, "TIME",
     "take the first sample at TIME: seconds since the epoch (agreed by every node: "
     "--at $(($(date +%s) + 10))) or +DURATION from now (up to a day: +10, +500ms)"},
    {0, "host", true, "NAME",
     "name this host in the snapshot (default: its hostname; %r: the MPI rank)"},
    {0, "hosts", true, "LIST",
     "qp-inspect-mpi: the job's hosts, for the job file (Slurm/pdsh syntax: node[01-04,7]; "
     "default under Slurm: SLURM_JOB_NODELIST)"},
    {0, "hostfile", true, "FILE",
     "qp-inspect-mpi: the job's hosts from an mpirun hostfile (node01 slots=8), for the job file"},
    {'h', "help", false, "", "show this help and exit"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// The statuses qp-inspect exits with (exit_codes.h's table); qp-inspect-mpi
// also 4, when a barrier or the gather fails.
constexpr ExitCode kExits[] = {kExitOk, kExitUsage, kExitNoDevice, kExitVerbs};
constexpr ExitCode kMpiExits[] = {kExitOk, kExitUsage, kExitNoDevice, kExitExchange, kExitVerbs};

constexpr DurationOption kInterval{"--interval", std::chrono::milliseconds(10),
                                   std::chrono::hours(1)};
constexpr DurationOption kAtOffset{"--at", std::chrono::seconds(0), std::chrono::hours(24)};

std::string Help(bool mpi) {
  return "Usage: qp-inspect [-d NAME,...] [--pid PID,...] [--comm NAME,...] [--json]\n"
         "                  [-o FILE] [--interval SECONDS] [--at TIME] [--host NAME]\n"
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
         "A whole job: one qp-inspect per node (srun, pdsh) with the same --at, each\n"
         "writing -o DIR/%h.json (%h: the host name), then `qp-validate DIR`; or\n"
         "`mpirun qp-inspect-mpi -o FILE` (a barrier before each sample, every rank's\n"
         "snapshot in rank 0's FILE, with the job's host list: --hosts, --hostfile, or\n"
         "under Slurm SLURM_JOB_NODELIST). docs/inspect.md says how close the samples are.\n"
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
         "Durations are seconds, with a fraction or a unit: 2, 0.5, 500ms, 1m.\n"
         "\n"
         "0: listed, also when nothing matches a filter (stderr says so); 2 also for an\n"
         "unwritable -o file; 3 also for no RDMA netlink; 6: a kernel query failed.\n" +
         (mpi ? "qp-inspect-mpi: 4 when a barrier or the gather fails.\n" : "") + "\n" +
         ExitStatusHelp(mpi ? std::span<const ExitCode>(kMpiExits)
                            : std::span<const ExitCode>(kExits));
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
  std::vector<std::string> devices;
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

// `pattern` with each %h replaced by `host` and each %r by `rank`.
std::string Expand(const std::string& pattern, const std::string& host, int rank) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() &&
        (pattern[i + 1] == 'h' || pattern[i + 1] == 'r')) {
      out += pattern[i + 1] == 'h' ? host : std::to_string(rank);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

// --at: seconds since the epoch, or "+DURATION" from `now` (duration_arg.h).
std::optional<double> ParseAt(const std::string& v, double now) {
  if (!v.empty() && v[0] == '+') {
    Result<ParsedDuration> d = ParseDuration(v.substr(1), kAtOffset);
    if (!d) return std::nullopt;
    return now + std::chrono::duration<double>(d->value).count();
  }
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !(x >= 0)) return std::nullopt;
  return x > 1e9 && x < 1e11 ? std::optional<double>(x) : std::nullopt;
}

// `epoch` (seconds) as UTC "10:32:05", with its milliseconds when it has
// some ("10:32:05.500"), and its date when it is `wait` > 12 h away.
std::string UtcClock(double epoch, double wait) {
  const auto whole = static_cast<std::time_t>(epoch);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char buf[48];
  std::strftime(buf, sizeof buf, wait > 12 * 3600 ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
  std::string out = buf;
  const auto ms = static_cast<int>((epoch - static_cast<double>(whole)) * 1000 + 0.5);
  if (ms > 0 && ms < 1000) {
    std::snprintf(buf, sizeof buf, ".%03d", ms);
    out += buf;
  }
  return out;
}

// qp-inspect-mpi: every rank's snapshot to rank 0, which writes the job file
// and says how far apart the ranks' first samples started.
int WriteJob(const Job& job, const Snapshot& snapshot, const std::vector<std::string>& hosts,
             const std::string& output, std::ostream& out, std::ostream& err) {
  std::optional<std::vector<std::string>> all = job.gather(SnapshotToText(snapshot));
  if (!all) {
    err << "qp-inspect-mpi: rank " << job.rank << ": gathering the snapshots failed\n";
    return kExitExchange;
  }
  if (job.rank != 0) return kExitOk;
  // Each rank's host, start and QP count, not its snapshot: rank 0 holds
  // every rank's text already, and a job of a thousand nodes is gigabytes.
  std::vector<Snapshot> parsed;
  size_t qps = 0;
  for (const std::string& text : *all) {
    if (Result<Snapshot> s = SnapshotFromJson(text)) {
      qps += s->samples.back().qps.size();
      Snapshot header;
      header.host = s->host;
      header.started_epoch = s->started_epoch;
      parsed.push_back(std::move(header));
    }
  }
  std::ofstream f(output, std::ios::trunc);
  WriteJobSnapshots(*all, f, hosts);
  f.close();
  if (!f) {
    const int e = errno;
    err << "qp-inspect-mpi: cannot write " << output << ": " << std::strerror(e) << "\n";
    return kExitUsage;
  }
  char skew[64];
  std::snprintf(skew, sizeof skew, "%.3f ms", SnapshotSkewSeconds(parsed) * 1000);
  out << "job snapshot of " << all->size() << " rank(s), " << qps << " QPs"
      << (hosts.empty() ? "" : ", a host list of " + std::to_string(hosts.size()))
      << ", written to " << output << "; first samples started within " << skew
      << " of each other (wall clocks); judge it with: qp-validate " << output << "\n";
  return kExitOk;
}

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
  env.wall_seconds = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  env.getenv = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
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
  const std::string_view tool = env.job != nullptr ? "qp-inspect-mpi" : kTool;
  Result<ParsedArgs> parsed = ParseArgs(args, Specs());
  if (!parsed) return UsageError(tool, err, parsed.error().detail);
  const ParsedArgs& a = *parsed;
  const bool mpi = env.job != nullptr;
  if (auto answered = AnswerHelpOrVersion(
          a, tool, [mpi] { return Help(mpi); }, out)) {
    return *answered;
  }
  PrintNotes(tool, a.notes, err);
  if (!a.positionals.empty())
    return UsageError(kTool, err, "unexpected argument '" + a.positionals[0] + "'");

  Filter filter;
  filter.devices = SplitList(a.Get("ib-dev").value_or(""));
  if (env.job != nullptr && filter.devices.size() > 1) {
    // One device per local rank, round-robin (qp-mesh's ChooseMeshDevice).
    const std::string mine =
        filter.devices[static_cast<size_t>(env.job->local_rank) % filter.devices.size()];
    filter.devices = {mine};
  }
  std::optional<double> at;
  if (auto v = a.Get("at")) {
    at = ParseAt(*v, env.wall_seconds ? env.wall_seconds() : 0);
    if (!at) {
      return UsageError(
          kTool, err,
          "--at must be seconds since the epoch or +DURATION (up to a day: +10, +0.5, +500ms), "
          "not '" +
              *v + "'");
    }
  }
  if (auto p = a.Get("pid")) {
    for (const std::string& item : SplitList(*p)) {
      Result<unsigned long> v = ParseUnsigned(item, "--pid", 1, 0x7fffffff);
      if (!v) return UsageError(kTool, err, v.error().detail);
      filter.pids.insert(static_cast<int>(*v));
    }
    if (filter.pids.empty()) return UsageError(kTool, err, "--pid needs a process id");
  }
  if (auto c = a.Get("comm")) {
    for (const std::string& item : SplitList(*c)) filter.comms.insert(item);
    if (filter.comms.empty()) return UsageError(kTool, err, "--comm needs a command name");
  }
  // The job's host list, for the job file: given, or Slurm's.
  std::vector<std::string> job_hosts;
  if (a.Has("hosts") || a.Has("hostfile")) {
    if (!mpi) {
      return UsageError(kTool, err,
                        "--hosts and --hostfile are qp-inspect-mpi's (its job file); for one "
                        "file per host give them to qp-validate");
    }
    Result<std::vector<std::string>> hosts = JobHostsOf(a.Get("hosts"), a.Get("hostfile"));
    if (!hosts) {
      return UsageError(tool, err,
                        (hosts.error().operation == "hostfile" ? "--hostfile " : "--hosts ") +
                            hosts.error().detail);
    }
    job_hosts = std::move(*hosts);
  } else if (mpi && env.getenv && !env.getenv("SLURM_JOB_NODELIST").empty()) {
    Result<std::vector<std::string>> hosts = ExpandHostList(env.getenv("SLURM_JOB_NODELIST"));
    if (hosts) {
      job_hosts = std::move(*hosts);
    } else if (env.job->rank == 0) {
      err << tool << ": SLURM_JOB_NODELIST " << hosts.error().detail
          << "; the job file carries no host list (give --hosts)\n";
    }
  }
  const int rank = env.job != nullptr ? env.job->rank : 0;
  const std::string host = Expand(a.Get("host").value_or(env.hostname()), env.hostname(), rank);
  std::optional<std::string> output = a.Get("output");
  if (output) output = Expand(*output, host, rank);
  if (env.job != nullptr && !output) return UsageError(kTool, err, "qp-inspect-mpi needs -o FILE");
  const bool writes = output && (env.job == nullptr || rank == 0);
  std::optional<double> interval;
  std::vector<std::string> notes;
  auto given = GetDuration(a, kInterval, notes);
  if (!given) return UsageError(kTool, err, given.error().detail);
  if (*given) interval = std::chrono::duration<double>(**given).count();
  if (output && !interval) interval = kDefaultInterval;
  if (writes) {
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
    if (filter.devices.empty() ||
        std::find(filter.devices.begin(), filter.devices.end(), d.name) != filter.devices.end()) {
      devices.push_back(d);
    }
  }
  for (const std::string& name : filter.devices) {
    if (std::none_of(devices.begin(), devices.end(),
                     [&](const NlDevice& d) { return d.name == name; })) {
      err << "qp-inspect: no device named '" << name << "'; devices: " << Names(*all) << "\n";
      return kExitNoDevice;
    }
  }

  Snapshot snapshot;
  snapshot.host = host;
  snapshot.tool = FirstLine(VersionText(env.job != nullptr ? "qp-inspect-mpi" : "qp-inspect"));
  kernel::SamplingPlan plan;
  plan.devices = devices;
  plan.interval = interval;
  if (filter.ByProcess()) plan.keep = [&](const KernelQp& q) { return filter.Keeps(q); };
  if (at && env.wall_seconds) {
    const double wait = *at - env.wall_seconds();
    if (wait > 0) {
      // Said, not slept silently (under MPI by rank 0 only: one line per job).
      if (rank == 0) {
        char in[32];
        std::snprintf(in, sizeof in, "%.1f s", wait);
        err << tool << ": sampling at " << UtcClock(*at, wait) << " UTC as agreed (--at), in " << in
            << " ...\n"
            << std::flush;
      }
      env.sleep(wait);
    } else if (wait < -0.1) {
      char late[64];
      std::snprintf(late, sizeof late, "%.3f", -wait);
      snapshot.notes.push_back(std::string("started ") + late +
                               " s after --at: this host's samples are that much later than the "
                               "other hosts'");
    }
  }
  // Under MPI every sample follows a barrier: the ranks leave it together.
  std::function<void(double)> sleep = env.sleep;
  bool channel_ok = true;
  if (env.job != nullptr) {
    channel_ok = env.job->barrier();
    sleep = [&](double s) {
      env.sleep(s);
      channel_ok &= env.job->barrier();
    };
  }
  if (env.wall_seconds) snapshot.started_epoch = env.wall_seconds();
  snapshot.taken_at = env.utc_now();
  Result<kernel::SamplingCounts> counts =
      kernel::TakeSamples(*env.reader, plan, {env.monotonic_seconds, sleep}, &snapshot);
  if (!channel_ok) {
    err << "qp-inspect-mpi: rank " << rank << ": a barrier failed\n";
    return kExitExchange;
  }
  if (!counts) return KernelError(err, counts.error());
  // Our own programs' QPs: the destinations their processes published.
  kernel::AddPublishedPeers(&snapshot);
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

  if (env.job != nullptr) return WriteJob(*env.job, snapshot, job_hosts, *output, out, err);
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
