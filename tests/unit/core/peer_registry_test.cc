// SPDX-License-Identifier: MIT
// Published peers (qpconnect/peer_registry.h, issue 41): what a process
// writes is what a reader finds for its pid; a file of an earlier process
// with the same pid, or a garbled or hostile one, is ignored with a note,
// never a crash; the file goes with the last QP.
#include "qpconnect/peer_registry.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace qpconnect {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/qpc_peers_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

PublishedPeer Peer(uint32_t qpn, uint32_t peer_qpn, const char* gid) {
  PublishedPeer p;
  p.device = "rxe0";
  p.port = 1;
  p.qpn = qpn;
  p.peer_host = "node-b";
  p.peer_gid = GidFromString(gid);
  p.peer_qpn = peer_qpn;
  return p;
}

PeerRegistry::Options Here(const std::string& dir) {
  PeerRegistry::Options o;
  o.dir = dir;
  o.pid = static_cast<int>(getpid());
  o.start_time = ProcessStartTime(o.pid).value_or(0);
  o.host = "node-a";
  return o;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(PeerRegistry, WhatIsPublishedIsReadBackForThePid) {
  TempDir d;
  PeerRegistry r(Here(d.path));
  const std::vector<PublishedPeer> two = {Peer(17, 18, "fe80::2"), Peer(19, 20, "fe80::2")};
  r.Publish(two);
  const std::vector<PublishedPeer> again = {Peer(21, 22, "::ffff:10.99.0.2")};
  r.Publish(again);
  r.Withdraw("rxe0", 19);
  EXPECT_EQ(r.live(), 2u);
  auto read = ReadPublishedPeers(static_cast<int>(getpid()), d.path);
  EXPECT_FALSE(read.note) << *read.note;
  ASSERT_EQ(read.peers.size(), 2u);
  EXPECT_EQ(read.peers[0], two[0]);
  EXPECT_EQ(read.peers[1], again[0]);
  // The file is the documented format: a header, then one line per event.
  const std::string text = Slurp(PeersFile(d.path, static_cast<int>(getpid())));
  EXPECT_EQ(text.rfind("{\"qpconnect_peers\":1,\"pid\":" + std::to_string(getpid()), 0), 0u)
      << text;
  EXPECT_NE(text.find("{\"op\":\"down\",\"device\":\"rxe0\",\"qpn\":19}\n"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(d.path.c_str(), &st), 0);
}

TEST(PeerRegistry, TheFileGoesWithTheLastQpAndAtClose) {
  TempDir d;
  PeerRegistry r(Here(d.path));
  const std::string file = PeersFile(d.path, static_cast<int>(getpid()));
  const std::vector<PublishedPeer> one = {Peer(17, 18, "fe80::2")};
  r.Publish(one);
  EXPECT_TRUE(fs::exists(file));
  r.Withdraw("rxe0", 99);  // not published: nothing changes
  EXPECT_TRUE(fs::exists(file));
  r.Withdraw("rxe0", 17);
  EXPECT_FALSE(fs::exists(file));
  r.Publish(one);  // a new file
  EXPECT_EQ(ReadPublishedPeers(static_cast<int>(getpid()), d.path).peers.size(), 1u);
  r.Close();
  EXPECT_FALSE(fs::exists(file));
}

TEST(PeerRegistry, ManyEventsStayOneSmallFile) {
  TempDir d;
  PeerRegistry r(Here(d.path));
  for (uint32_t i = 0; i < 1000; ++i) {
    const std::vector<PublishedPeer> p = {Peer(100 + i % 3, 200 + i, "fe80::2")};
    r.Publish(p);
  }
  const std::string text = Slurp(PeersFile(d.path, static_cast<int>(getpid())));
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_LE(lines, 1u + 2 * 3 + 64 + 1);  // rewritten when the dead lines pile up
  auto read = ReadPublishedPeers(static_cast<int>(getpid()), d.path);
  ASSERT_EQ(read.peers.size(), 3u);
  EXPECT_EQ(read.peers[0].peer_qpn, 200u + 999u);  // qpn 100: the last of i % 3 == 0
  EXPECT_FALSE(fs::exists(PeersFile(d.path, static_cast<int>(getpid())) + ".tmp"));
}

// Files of processes that are gone, or whose pid another process now has,
// are removed when a process makes its own file; a live process's stays.
TEST(PeerRegistry, ItsFirstFileSweepsTheDeadProcessesFiles) {
  TempDir d;
  const int parent = static_cast<int>(getppid());
  const uint64_t parent_start = ProcessStartTime(parent).value();
  const std::string dead = PeersFile(d.path, 99999999);
  const std::string reused = d.path + "/1.jsonl";  // init's pid, another start time
  const std::string live = PeersFile(d.path, parent);
  Write(dead, PeersHeaderLine(99999999, 5, "x"));
  Write(reused, PeersHeaderLine(1, ProcessStartTime(1).value_or(0) + 777, "x"));
  Write(live, PeersHeaderLine(parent, parent_start, "x"));
  Write(d.path + "/notes.txt", "not ours to judge");
  PeerRegistry r(Here(d.path));
  const std::vector<PublishedPeer> one = {Peer(17, 18, "fe80::2")};
  r.Publish(one);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(reused));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(d.path + "/notes.txt"));
}

TEST(PeerRegistry, DisabledPublishesNothing) {
  TempDir d;
  PeerRegistry::Options o = Here(d.path);
  o.enabled = false;
  PeerRegistry r(o);
  const std::vector<PublishedPeer> one = {Peer(17, 18, "fe80::2")};
  r.Publish(one);
  EXPECT_TRUE(fs::is_empty(d.path));
}

// A file left by an earlier process whose pid this process now has: its
// start time differs from the live process's, and it is ignored.
TEST(ReadPublishedPeers, AReusedPidsStaleFileIsIgnored) {
  TempDir d;
  const int pid = static_cast<int>(getpid());
  const uint64_t start = ProcessStartTime(pid).value();
  Write(PeersFile(d.path, pid),
        PeersHeaderLine(pid, start + 12345, "node-a") + PeerUpLine(Peer(17, 18, "fe80::2")));
  auto read = ReadPublishedPeers(pid, d.path);
  EXPECT_TRUE(read.peers.empty());
  ASSERT_TRUE(read.note);
  EXPECT_NE(read.note->find("stale"), std::string::npos) << *read.note;
  // The same file with the live start time is read.
  Write(PeersFile(d.path, pid),
        PeersHeaderLine(pid, start, "node-a") + PeerUpLine(Peer(17, 18, "fe80::2")));
  EXPECT_EQ(ReadPublishedPeers(pid, d.path).peers.size(), 1u);
}

TEST(ReadPublishedPeers, ADeadProcessOrNoFileGivesNothing) {
  TempDir d;
  EXPECT_TRUE(ReadPublishedPeers(static_cast<int>(getpid()), d.path).peers.empty());
  EXPECT_FALSE(ReadPublishedPeers(static_cast<int>(getpid()), d.path).note);
  // A pid above pid_max is no process; a file for it is never read.
  Write(PeersFile(d.path, 99999999), PeersHeaderLine(99999999, 1, "x"));
  EXPECT_TRUE(ReadPublishedPeers(99999999, d.path).peers.empty());
  EXPECT_FALSE(ReadPublishedPeers(99999999, d.path).note);
}

TEST(ReadPublishedPeers, AFileNamingAnotherPidIsIgnored) {
  TempDir d;
  const int pid = static_cast<int>(getpid());
  Write(PeersFile(d.path, pid), PeersHeaderLine(pid + 1, ProcessStartTime(pid).value(), "x") +
                                    PeerUpLine(Peer(17, 18, "fe80::2")));
  auto read = ReadPublishedPeers(pid, d.path);
  EXPECT_TRUE(read.peers.empty());
  ASSERT_TRUE(read.note);
  EXPECT_NE(read.note->find("names pid"), std::string::npos) << *read.note;
}

TEST(ParsePeersFile, GarbledLinesAreSkippedWithANote) {
  const std::string header = PeersHeaderLine(7, 100, "node-a");
  const std::string text =
      header + PeerUpLine(Peer(17, 18, "fe80::2")) +
      "{\"op\":\"up\",\"device\":\"rxe0\",\"qpn\":99999999999999999999999,\"port\":1}\n" +
      "{\"op\":\"up\",\"device\":\"rxe0\",\"qpn\":5,\"port\":1,\"peer_host\":\"h\","
      "\"peer_gid\":\"not-a-gid\",\"peer_lid\":0,\"peer_qpn\":6}\n" +
      "{\"op\":\"up\",\"device\":\"rxe0\",\"qpn\":5,\"port\":1,\"peer_host\":\"h\","
      "\"peer_lid\":70000,\"peer_qpn\":6}\n" +
      "{{{{{{{{{{[[[[\n" + std::string(5000, '"') + "\n" + "\x01\x02\xff\xfe\n" +
      "{\"op\":\"sideways\",\"device\":\"rxe0\",\"qpn\":3}\n" +
      PeerUpLine(Peer(19, 20, "fe80::3")) + "{\"op\":\"up\",\"device\":\"rx";  // cut short
  PeersFileContents c = ParsePeersFile(text);
  ASSERT_TRUE(c.valid);
  EXPECT_EQ(c.pid, 7);
  EXPECT_EQ(c.start_time, 100u);
  ASSERT_EQ(c.peers.size(), 2u);
  EXPECT_EQ(c.peers[0].qpn, 17u);
  EXPECT_EQ(c.peers[1].qpn, 19u);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0], "8 line(s) not of the format skipped");
}

TEST(ParsePeersFile, NoHeaderNoPeers) {
  for (const std::string& text :
       {std::string(), std::string("garbage\n"), PeerUpLine(Peer(17, 18, "fe80::2")),
        std::string("{\"qpconnect_peers\":2,\"pid\":1,\"start_time\":1}\n"),
        std::string("{\"qpconnect_peers\":1,\"pid\":\"1\",\"start_time\":1}\n")}) {
    PeersFileContents c = ParsePeersFile(text + PeerUpLine(Peer(17, 18, "fe80::2")));
    EXPECT_FALSE(c.valid) << text;
    EXPECT_TRUE(c.peers.empty()) << text;
  }
}

TEST(ParsePeersFile, RandomBytesNeverCrash) {
  std::mt19937 rng(41);
  const std::string header = PeersHeaderLine(7, 100, "node-a");
  const std::string good = PeerUpLine(Peer(17, 18, "fe80::2"));
  for (int i = 0; i < 2000; ++i) {
    std::string text = header + good;
    // Flip, cut or insert bytes of a good file.
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 4);
          break;
        default:
          text.insert(at, 1, static_cast<char>(rng() % 256));
      }
      if (text.empty()) text = "{";
    }
    PeersFileContents c = ParsePeersFile(text);
    EXPECT_LE(c.peers.size(), 1u);
  }
}

// /proc/PID/stat's command may hold spaces and parentheses: field 22 is
// counted from the last ')'.
TEST(ProcessStartTime, CountsFieldsAfterTheCommand) {
  TempDir d;
  fs::create_directories(d.path + "/77");
  std::string stat = "77 (a) b (c) S";
  for (int field = 4; field <= 21; ++field) stat += " " + std::to_string(field);
  stat += " 987654 23 24\n";
  Write(d.path + "/77/stat", stat);
  EXPECT_EQ(ProcessStartTime(77, d.path), 987654u);
  EXPECT_FALSE(ProcessStartTime(78, d.path));
  Write(d.path + "/77/stat", "77 (short) S 1 2\n");
  EXPECT_FALSE(ProcessStartTime(77, d.path));
  EXPECT_TRUE(ProcessStartTime(static_cast<int>(getpid())));
}

}  // namespace
}  // namespace qpconnect
