// SPDX-License-Identifier: MIT
// The library's locks, with their contracts written where clang checks them
// (its thread-safety analysis, -Wthread-safety, on in clang builds: the
// fuzz build of tools/dev/test.sh compiles libqpcm with clang-14, and a
// broken contract fails it). With other compilers the annotations are empty.
//
//   library_mutex   the one lock over ids, channels' membership, links'
//                   books and devices (state.h); taken by LibraryLock,
//                   required by what cm.h, qp.h, events.h, devices.h and
//                   address.h name REQUIRES(library_mutex)
//   Channel::mu     a channel's queue (state.h), taken alone by
//                   rdma_get_cm_event so that a program's event thread never
//                   waits for the library lock; inside library_mutex
//                   everywhere else
//   Link's out_mu_  a link's send side (link.h); taken last, nothing under it
//
// Thread-safety: Mutex is std::mutex with its capability named; the guards
// are scoped (released at the end of their scope, or earlier by unlock()).
#pragma once

#include <mutex>

#if defined(__clang__)
#define QPCM_TSA(x) __attribute__((x))
#else
#define QPCM_TSA(x)
#endif

#define QPCM_CAPABILITY(name) QPCM_TSA(capability(name))
#define QPCM_SCOPED_CAPABILITY QPCM_TSA(scoped_lockable)
#define QPCM_GUARDED_BY(x) QPCM_TSA(guarded_by(x))
#define QPCM_REQUIRES(...) QPCM_TSA(requires_capability(__VA_ARGS__))
#define QPCM_ACQUIRE(...) QPCM_TSA(acquire_capability(__VA_ARGS__))
#define QPCM_RELEASE(...) QPCM_TSA(release_capability(__VA_ARGS__))
#define QPCM_EXCLUDES(...) QPCM_TSA(locks_excluded(__VA_ARGS__))
#define QPCM_NO_THREAD_SAFETY_ANALYSIS QPCM_TSA(no_thread_safety_analysis)

namespace qpconnect::rdmacm {

class QPCM_CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  void lock() QPCM_ACQUIRE() { mu_.lock(); }
  void unlock() QPCM_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope.
class QPCM_SCOPED_CAPABILITY MutexGuard {
 public:
  explicit MutexGuard(Mutex& mu) QPCM_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexGuard() QPCM_RELEASE() { mu_.unlock(); }
  MutexGuard(const MutexGuard&) = delete;
  MutexGuard& operator=(const MutexGuard&) = delete;

 private:
  Mutex& mu_;
};

// Holds `mu` from its construction to its scope's end; unlock() and lock()
// let it go and take it again inside that scope. A BasicLockable, so that a
// condition_variable_any waits on it.
class QPCM_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) QPCM_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() QPCM_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void unlock() QPCM_RELEASE() {
    held_ = false;
    mu_.unlock();
  }
  void lock() QPCM_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// The library's one lock (state.h). Never destroyed before the ids: a
// constant-initialized object whose destructor does nothing.
extern Mutex library_mutex;

// A MutexLock over library_mutex (a synchronous call's wait, a listener's
// close let it go and take it again).
class QPCM_SCOPED_CAPABILITY LibraryLock : public MutexLock {
 public:
  LibraryLock() QPCM_ACQUIRE(library_mutex) : MutexLock(library_mutex) {}
  ~LibraryLock() QPCM_RELEASE() = default;
  LibraryLock(const LibraryLock&) = delete;
  LibraryLock& operator=(const LibraryLock&) = delete;
};

}  // namespace qpconnect::rdmacm
