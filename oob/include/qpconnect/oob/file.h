// SPDX-License-Identifier: MIT
// FileExchanger: endpoint descriptions through files in an agreed directory
// (a shared file system, or a directory a scheduler copies between hosts).
//
// The two sides agree on a directory, a session name and two distinct role
// names (e.g. "a" and "b"). Every file is written atomically: a temporary file
// in the same directory (mode 0600), fsync, rename, fsync of the directory.
// Each file holds one frame (frame.h). For session S and role R:
//
//   S.R.lock        held (flock) by R's process while its exchanger lives
//   S.R.hello       R's fresh random nonce
//   S.R.confirm     with a PSK: R's key confirmation, bound to both nonces
//   S.R.qpc         R's description, bound to R's nonce and the peer's
//                   (with a PSK encrypted, and written only once the peer's
//                   confirmation verified)
//   S.R.barrier-N   R's N-th barrier marker (stage name), bound likewise
//   S.R.abort       R gave up (Abort()), bound likewise
//
// Exchange() writes the hello, waits for the peer's, writes the description
// bound to both nonces, and waits for the peer's description bound to this
// side's nonce. A file bound to another nonce is stale (an earlier run, or a
// hello the peer read before this side replaced it): it is refused, never
// used, and the wait goes on; if nothing fresh arrives the kTimeout error
// names the stale file. The peer's hello may itself be stale, so the peer's
// nonce is learnt from its description; a side whose own description was
// bound to another nonce rewrites it then, so the two always converge. (The
// sequence and its checks are the protocol driver's, shared with tcp, stdio
// and channel.h; this transport maps each message to a file.) The reader of a
// description or marker removes it once it has accepted it: that is the
// acknowledgement, and Exchange() and Barrier() return only when both sides
// have each other's message. A side removes its own files (and leftovers of
// an earlier run under its role) at the start of Exchange(), on a timeout or
// I/O failure, and on destruction. After refusing the peer's message
// (kProtocol, kAuth, kIncompatible) it keeps them until destruction or its
// next Exchange(), so that the peer can read them and fail with its own
// error, not a timeout.
//
// Waiting uses inotify on the directory where available, plus polling every
// poll_interval (inotify sees no change made by another NFS client), all
// bounded by the deadline. A peer file is read only when complete: one that
// holds less than its frame announces (a copy still in progress) counts as
// not there yet. Files larger than the frame cap are refused before they are
// read; symlinks and files owned by another user are refused.
//
// A dead peer is noticed within a poll_interval: each side holds an
// exclusive flock on S.R.lock (taken before the file is renamed into place),
// and a peer lock once seen held that is then free or gone means the peer's
// process exited or was killed (kIo "the peer went away"). On NFS, flock is
// emulated with POSIX locks and a crashed client's lock lasts until the
// server's lease expires.
//
// Thread-safety: one thread at a time. Two processes must not use the same
// (directory, session, role): the second is refused (kIncompatible) while the
// first holds the role's lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/protocol_exchanger.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

struct FileOptions {
  std::filesystem::path directory;  // must exist
  // Session name: 1-64 of [A-Za-z0-9_-]. Both sides use the same.
  std::string session;
  // This side's role and the peer's: 1-32 of [A-Za-z0-9_-], distinct.
  std::string role = "a";
  std::string peer_role = "b";
  std::optional<Psk> psk;  // both sides need the same key, or neither
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  // The most QPs the peer's description may hold; 0: as many as ours.
  uint32_t max_peer_qps = 0;
  std::chrono::milliseconds poll_interval{100};
  bool use_inotify = true;  // false: poll only
};

// The calls of the Exchanger interface (protocol_exchanger.h), as files:
//   Exchange()  kTimeout's detail says what was missing (the peer's hello,
//               its description, a stale file seen, or the peer not picking
//               up ours); kIo also for write/rename/fsync failures; kAuth
//               also for a peer file owned by another user.
//   Barrier()   writes S.R.barrier-N and waits for the peer's, bound to this
//               session (BarrierWithNote(): the note in the same files).
//   Abort()     writes S.R.abort, bound to this session, which the peer's
//               Exchange() and Barrier() watch for. The file outlives this
//               exchanger (a program aborts, then exits): the peer removes
//               it when it reads it, or this role's next Exchange() does.
//               Does nothing before the peer's nonce is known.
//   PollPeer()  kProtocol once the peer's abort file is there, kIo once the
//               peer's lock is no longer held (its process exited or was
//               killed).
//   Cancel()    ends a pending wait for the peer's file within poll_interval
//               (default 100 ms) and writes the abort file with the reason
//               once the peer's hello is known.
// Destroying the exchanger removes this side's remaining files.
class FileExchanger : public ProtocolExchanger {
 public:
  // Checks the options and that `directory` is a directory. Errors:
  // kInvalidArgument (bad session or role names, equal roles, bad interval or
  // cap), kNotFound (no such directory), kIo (not accessible).
  static Result<std::unique_ptr<FileExchanger>> Create(FileOptions options);

  // Path of the file of `role` and `kind` ("hello", "qpc", "barrier-1").
  std::filesystem::path PathOf(std::string_view role, std::string_view kind) const;

 private:
  class Impl;
  explicit FileExchanger(std::unique_ptr<Impl> impl);
  const Impl& impl() const;
};

}  // namespace qpconnect::oob
