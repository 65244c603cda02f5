// SPDX-License-Identifier: MIT
// Published peers: each connected QP's peer as the toolkit's own programs
// (qp-connect, the C++ and C API, libqpcm, qp-mesh) publish it, so that
// `qp-inspect` can give the QP a destination when the kernel shows none (rxe's
// tracker shows none; docs/inspect.md "Published peers").
//
// Where: one file per process, DIR/<pid>.jsonl, DIR chosen from the process's
// uid alone (PeersDir), so that a reader running as root or as another user
// finds it from the QP's pid (/proc/<pid> gives the uid) without the writer's
// environment (which /proc shows to its owner only):
//   /run/user/<uid>/qpconnect/peers   when /run/user/<uid> is a directory the
//                                     uid owns (the runtime directory)
//   /tmp/qpconnect-<uid>/peers        otherwise (made 0700; refused when it
//                                     is not the uid's own, private directory)
// QPCONNECT_PEERS_DIR overrides both, for writer and reader alike (tests).
//
// Format: JSON lines. The first line names the process:
//   {"qpconnect_peers":1,"pid":812,"start_time":99182,"host":"node-a"}
// start_time is /proc/<pid>/stat field 22 (clock ticks since boot): a reader
// ignores the file when the live process's differs (a reused pid). Then one
// line per event, in order; the last "up" of a (device, qpn) stands until a
// "down" of it:
//   {"op":"up","device":"rxe0","port":1,"qpn":17,"peer_host":"node-b",
//    "peer_gid":"fe80::...","peer_lid":0,"peer_qpn":18}
//   {"op":"down","device":"rxe0","qpn":17}
// An event is one append (one write(2)), so a connect costs one small write
// however many QPs the process holds; when the dead lines outnumber the live
// ones the file is rewritten (a temporary file renamed over it, so a reader
// sees the old or the new one whole). The file is removed when the process's
// last published QP is destroyed, and at exit.
//
// Publishing never fails a connection: the first error is logged (log.h,
// a warning) and publishing stops for the process. QPCONNECT_PUBLISH_PEERS=0
// turns it off.
//
// Thread-safety: a PeerRegistry's calls may come from any thread (one mutex).
// The free functions are pure or read files only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qpconnect/endpoint.h"

namespace qpconnect {

// The environment variables: "0" (or "off", "no", "false") in the first
// turns publishing off; the second names the directory (writer and reader).
inline constexpr char kPublishPeersEnv[] = "QPCONNECT_PUBLISH_PEERS";
inline constexpr char kPeersDirEnv[] = "QPCONNECT_PEERS_DIR";

// One connected QP of this process and its peer.
struct PublishedPeer {
  std::string device;  // this side's device ("rxe0")
  uint8_t port = 0;
  uint32_t qpn = 0;
  std::string peer_host;        // the peer's host as it described itself; "" unknown
  std::optional<Gid> peer_gid;  // the destination GID (a GRH is used); nullopt without
  uint16_t peer_lid = 0;        // the destination LID (InfiniBand); 0 unknown
  uint32_t peer_qpn = 0;

  friend bool operator==(const PublishedPeer&, const PublishedPeer&) = default;
};

// The directory of `uid`'s files, as above ("" when there is none to use and
// `create` is false). With `create`, the /tmp fallback is made 0700 when
// missing; a directory found there that is not the uid's own, or that others
// may write, is refused with a reason in `why`.
std::string PeersDir(uid_t uid, bool create = false, std::string* why = nullptr);

// The file of `pid` in `dir`.
std::string PeersFile(const std::string& dir, int pid);

// /proc/<pid>/stat field 22 (the start time in clock ticks since boot) under
// `proc_root`; nullopt when the process is gone or its stat unreadable.
std::optional<uint64_t> ProcessStartTime(int pid, const std::string& proc_root = "/proc");

// The lines of the format, each ending in '\n'.
std::string PeersHeaderLine(int pid, uint64_t start_time, const std::string& host);
std::string PeerUpLine(const PublishedPeer& peer);
std::string PeerDownLine(const std::string& device, uint32_t qpn);

// A file's contents read back: the header's pid and start time, the peers
// standing at its end (by device, then qpn), and what was wrong with it (a
// line that is not of the format, cut short or hostile, is skipped with one
// note saying how many).
struct PeersFileContents {
  int pid = 0;
  uint64_t start_time = 0;
  std::string host;
  std::vector<PublishedPeer> peers;
  std::vector<std::string> notes;
  bool valid = false;  // the header was read
};
PeersFileContents ParsePeersFile(std::string_view text);

// What a reader found for one process.
struct PublishedPeersOfProcess {
  std::vector<PublishedPeer> peers;  // empty: none published, or ignored (see note)
  std::optional<std::string> note;   // why a file found was ignored, or was odd
  bool denied = false;               // this user may not read the directory
};

// The peers `pid` published: its uid from the owner of `proc_root`/<pid>,
// its file in PeersDir(uid) (or `dir` when not empty), which must belong to
// that uid, be a regular file under 64 MiB and name that pid and the live
// process's start time. No file: no peers and no note (the process
// published none); a file this user may not read: a note. Never throws.
PublishedPeersOfProcess ReadPublishedPeers(int pid, const std::string& dir = {},
                                           const std::string& proc_root = "/proc");

// The writer of one process's file.
class PeerRegistry {
 public:
  struct Options {
    std::string dir;  // where the file goes; made (0700) when missing
    int pid = 0;
    uint64_t start_time = 0;
    std::string host;
    bool enabled = true;
  };
  explicit PeerRegistry(Options options);
  ~PeerRegistry();  // removes the file
  PeerRegistry(const PeerRegistry&) = delete;
  PeerRegistry& operator=(const PeerRegistry&) = delete;

  // The process's registry, from the environment (kPublishPeersEnv,
  // kPeersDirEnv, PeersDir(getuid())): made at its first use and never
  // destroyed; its file is removed at exit (atexit). After a fork() the child
  // starts a file of its own.
  static PeerRegistry& Process();
  // Whether Process() was made (a destroy in a process that never published
  // need not make it).
  static bool ProcessStarted();

  // These QPs are connected to these peers (a QP published before is
  // replaced). The first failure is logged once; publishing then stops.
  void Publish(std::span<const PublishedPeer> peers) noexcept;
  // This QP is destroyed: its entry goes; the file goes with the last.
  void Withdraw(const std::string& device, uint32_t qpn) noexcept;
  // Removes the file and forgets every entry (exit).
  void Close() noexcept;

  size_t live() const;
  bool failed() const;
  std::string path() const;  // "" before the first publish

 private:
  bool EnsureOpen();  // the file exists and fd_ appends to it
  bool Rewrite();     // header + live entries, renamed over the file
  bool Append(const std::string& text);
  void Fail(const std::string& what, int err);
  void ResetAfterFork();

  mutable std::mutex mu_;
  Options options_;
  std::string path_;
  int fd_ = -1;
  size_t lines_ = 0;  // event lines in the file
  bool failed_ = false;
  bool process_ = false;  // Process(): follows fork()
  std::map<std::pair<std::string, uint32_t>, PublishedPeer> live_;
};

}  // namespace qpconnect
