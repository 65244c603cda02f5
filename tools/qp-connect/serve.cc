// SPDX-License-Identifier: MIT
#include "serve.h"

#include <csignal>

#include <atomic>
#include <string>

#include "exit_codes.h"
#include "qpconnect/oob/interrupt.h"

namespace qpconnect::tools {
namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_stop_waits{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void OnServeSignal(int sig) {
  g_signal = sig;
  g_stop_waits.store(true);
}

// Installs the handlers for its lifetime; restores the previous ones and
// turns the out-of-band interrupt off after.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction sa {};
    sa.sa_handler = OnServeSignal;
    // Restarted: output and the other slow calls are not cut short; the
    // waits do not rely on EINTR (they look at the flag).
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    oob::SetInterruptFlag(&g_stop_waits);
  }
  ~SignalScope() {
    oob::SetInterruptFlag(nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

int ServeSignal() { return g_signal; }

const char* ServeSignalName(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

void ResumeWaitsAfterSignal() { g_stop_waits.store(false); }

int ServePeers(const ConnectOptions& o, std::ostream& out, std::ostream& err,
               const std::function<PeerOutcome(unsigned peer)>& run_peer) {
  SignalScope scope;
  unsigned served = 0;
  unsigned failed = 0;
  int first_failure = kExitOk;
  while (ServeSignal() == 0 && (!o.count || served < *o.count)) {
    const PeerOutcome r = run_peer(served + 1);
    if (r.fatal && ServeSignal() == 0) return r.status;
    if (r.no_peer) continue;
    ++served;
    if (r.status != kExitOk) {
      ++failed;
      if (first_failure == kExitOk) first_failure = r.status;
      if (!o.json && ServeSignal() == 0) {
        err << "qp-connect: peer " << served << ": failed (exit " << r.status
            << "); serving the next\n";
      }
    }
  }
  if (const int sig = ServeSignal(); sig != 0) {
    if (!o.json) {
      err << "qp-connect: " << ServeSignalName(sig) << ": stopped serving after " << served
          << " peer(s), " << failed << " failed; every QP released\n";
    }
    return sig == SIGTERM ? kExitSigterm : kExitSigint;  // 128 + the signal
  }
  if (!o.json) {
    out << "qp-connect: served " << served << " peer(s), " << failed << " failed\n";
  }
  return first_failure;
}

}  // namespace qpconnect::tools
