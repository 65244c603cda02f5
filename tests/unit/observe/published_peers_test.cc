// SPDX-License-Identifier: MIT
// AddPublishedPeers() (observe/published_peers.h, issue 41): a snapshot's QPs
// given the destinations their processes published, the kernel's own
// destination winning, a contradicting entry (a reused QPN) and a stale
// file not used; and the source saying so in the snapshot file.
#include "qpconnect/observe/published_peers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/peer_registry.h"

namespace qpconnect::kernel {
namespace {

namespace fs = std::filesystem;

// A fake /proc with one process (pid 500, start time 4321, owned by this
// user) and a directory of published peers.
struct World {
  World() {
    char tmpl[] = "/tmp/qpc_published_XXXXXX";
    root = mkdtemp(tmpl);
    fs::create_directories(root + "/proc/500");
    fs::create_directories(root + "/peers");
    std::string stat = "500 (qp-connect) S";
    for (int field = 4; field <= 21; ++field) stat += " 1";
    stat += " 4321 1\n";
    std::ofstream(root + "/proc/500/stat") << stat;
    options.dir = root + "/peers";
    options.proc_root = root + "/proc";
  }
  ~World() { fs::remove_all(root); }
  void Publish(uint64_t start_time, const std::string& lines) {
    std::ofstream(PeersFile(options.dir, 500))
        << PeersHeaderLine(500, start_time, "node-a") << lines;
  }
  std::string root;
  PublishedPeersOptions options;
};

KernelQp Qp(uint32_t lqpn, const std::string& state, uint32_t rqpn) {
  KernelQp q;
  q.device = "rxe0";
  q.port = 1;
  q.lqpn = lqpn;
  q.type = "RC";
  q.state = state;
  q.rqpn = rqpn;
  q.pid = 500;
  return q;
}

std::string Up(uint32_t qpn, uint32_t peer_qpn) {
  PublishedPeer p;
  p.device = "rxe0";
  p.port = 1;
  p.qpn = qpn;
  p.peer_host = "node-b";
  p.peer_gid = GidFromString("::ffff:10.99.0.2");
  p.peer_qpn = peer_qpn;
  return PeerUpLine(p);
}

TEST(AddPublishedPeers, FillsWhatTheKernelDoesNotShow) {
  World w;
  w.Publish(4321, Up(17, 18) + Up(19, 20) + Up(21, 22) + Up(23, 24));
  Snapshot s;
  KernelSample sample;
  sample.qps.push_back(Qp(17, "RTS", 18));  // filled
  KernelQp kernels = Qp(19, "RTS", 20);     // the kernel's destination wins
  kernels.dgid = GidFromString("::ffff:10.99.0.9");
  sample.qps.push_back(kernels);
  sample.qps.push_back(Qp(21, "INIT", 0));  // reused QPN, not connected yet
  sample.qps.push_back(Qp(23, "RTS", 99));  // reused QPN, connected elsewhere
  KernelQp other = Qp(17, "RTS", 18);       // another process's QP 17
  other.pid = 501;
  sample.qps.push_back(other);
  s.samples.push_back(sample);
  EXPECT_EQ(AddPublishedPeers(&s, w.options), 1u);
  const auto& qps = s.samples[0].qps;
  ASSERT_TRUE(qps[0].dgid);
  EXPECT_EQ(GidToString(*qps[0].dgid), "::ffff:10.99.0.2");
  EXPECT_FALSE(qps[0].dlid);
  EXPECT_EQ(qps[0].dest_source, "published");
  EXPECT_EQ(GidToString(*qps[1].dgid), "::ffff:10.99.0.9");
  EXPECT_EQ(qps[1].dest_source, "");
  EXPECT_FALSE(qps[2].dgid);
  EXPECT_FALSE(qps[3].dgid);
  EXPECT_FALSE(qps[4].dgid);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("1 QP(s) given the destination"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[0].find("2 published entr(ies) not used"), std::string::npos) << s.notes[0];

  // The snapshot file says where the destination came from, and reads back.
  auto back = SnapshotFromJson(SnapshotToText(s));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->samples[0].qps[0].dest_source, "published");
  EXPECT_EQ(back->samples[0].qps[0], qps[0]);
}

TEST(AddPublishedPeers, AStaleFileIsNotUsedAndSaysWhy) {
  World w;
  w.Publish(1111, Up(17, 18));  // written by an earlier process with pid 500
  Snapshot s;
  s.samples.emplace_back().qps.push_back(Qp(17, "RTS", 18));
  EXPECT_EQ(AddPublishedPeers(&s, w.options), 0u);
  EXPECT_FALSE(s.samples[0].qps[0].dgid);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("stale"), std::string::npos) << s.notes[0];
}

TEST(AddPublishedPeers, AGarbledFileIsANoteNotACrash) {
  World w;
  std::ofstream(PeersFile(w.options.dir, 500)) << "\x7f"
                                                  "ELF\x01\x02 not json at all\n{{{{\n";
  Snapshot s;
  s.samples.emplace_back().qps.push_back(Qp(17, "RTS", 18));
  EXPECT_EQ(AddPublishedPeers(&s, w.options), 0u);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("ignored: not a published-peers file"), std::string::npos)
      << s.notes[0];
}

TEST(AddPublishedPeers, NoFileNoNote) {
  World w;
  Snapshot s;
  s.samples.emplace_back().qps.push_back(Qp(17, "RTS", 18));
  EXPECT_EQ(AddPublishedPeers(&s, w.options), 0u);
  EXPECT_TRUE(s.notes.empty());
}

}  // namespace
}  // namespace qpconnect::kernel
