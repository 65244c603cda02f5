// SPDX-License-Identifier: MIT
// FileExchanger in temporary directories: pairwise, batching, barrier,
// atomic 0600 files, stale files, files still being written, cleanup, PSK
// (accept, wrong key, one side without key, replay, tamper, the documented
// key confirmation and encryption), hostile files, a dead peer noticed by its
// lock, and two processes with one role.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/file.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits (bounded) until `p` exists or not.
bool WaitFor(const fs::path& p, bool exists, std::chrono::milliseconds limit = 5s) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (fs::exists(p) == exists) return true;
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

// Writes `bytes` to `p` atomically, as a peer would.
void Plant(const fs::path& p, const std::string& bytes) {
  const fs::path tmp = p.parent_path() / ("." + p.filename().string() + ".test");
  std::ofstream(tmp, std::ios::binary) << bytes;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write);
  fs::rename(tmp, p);
}

std::string Bytes(const Nonce& n) { return std::string(n.begin(), n.end()); }

std::string HelloFrame(const Nonce& n, bool psk) {
  Frame f;
  f.type = FrameType::kHello;
  f.flags = psk ? kFrameFlagPsk : 0;
  f.payload = Bytes(n);
  return EncodeFrame(f);
}

// An unauthenticated description frame (no key): binding and body.
std::string DescFrame(const Nonce& sender, const Nonce& receiver, const EndpointInfo& e) {
  Frame f;
  f.type = FrameType::kEndpoint;
  f.flags = kFrameFlagBound;
  f.payload = Bytes(sender) + Bytes(receiver) + std::string(4, '\0') + EncodeBinary(e);
  return EncodeFrame(f);
}

// The keyed scheme built from docs/oob.md alone ("Key confirmation and
// encryption"): keys from HKDF-SHA256 over the PSK with both nonces as salt,
// a confirm frame with an HMAC trailer, descriptions sealed with AES-256-GCM.
SecretKey DocKey(const Psk& key, const char* purpose, const Nonce& sender, const Nonce& receiver) {
  const bool lo = std::memcmp(sender.data(), receiver.data(), kNonceBytes) < 0;
  const std::string salt = lo ? Bytes(sender) + Bytes(receiver) : Bytes(receiver) + Bytes(sender);
  const std::string info =
      std::string("qpconnect-oob-v2 ") + purpose + " " + (lo ? "lo>hi" : "hi>lo");
  const std::string ikm(key.bytes().begin(), key.bytes().end());
  return *HkdfSha256(ikm, salt, info);
}

std::string Binding(const Nonce& sender, const Nonce& receiver, uint32_t seq) {
  return Bytes(sender) + Bytes(receiver) +
         std::string{static_cast<char>(seq >> 24), static_cast<char>(seq >> 16),
                     static_cast<char>(seq >> 8), static_cast<char>(seq)};
}

std::string DocConfirm(const Psk& key, const Nonce& sender, const Nonce& receiver) {
  Frame f;
  f.type = FrameType::kConfirm;
  f.flags = kFrameFlagBound | kFrameFlagMac;
  f.payload = Binding(sender, receiver, 0);
  const SecretKey k = DocKey(key, "confirm", sender, receiver);
  const std::string header = EncodeFrameHeader(f.type, f.flags, kNonceBytes * 2 + 4);
  auto mac = HmacSha256(std::string_view(reinterpret_cast<const char*>(k.data()), k.size()),
                        {header, f.payload});
  f.mac.assign(mac->begin(), mac->end());
  return EncodeFrame(f);
}

AeadIv DocIv(FrameType type, uint32_t seq) {
  AeadIv iv{};
  iv[0] = static_cast<uint8_t>(type);
  for (size_t i = 0; i < 4; ++i) iv[8 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
  return iv;
}

std::string DocSealed(const Psk& key, FrameType type, const Nonce& sender, const Nonce& receiver,
                      uint32_t seq, const std::string& body) {
  const std::string binding = Binding(sender, receiver, seq);
  const uint8_t flags = kFrameFlagBound | kFrameFlagSealed;
  const std::string header =
      EncodeFrameHeader(type, flags, static_cast<uint32_t>(binding.size() + body.size()));
  auto sealed =
      AeadSeal(DocKey(key, "seal", sender, receiver), DocIv(type, seq), header + binding, body);
  return header + binding + *sealed;  // ciphertext, then the 16-byte tag
}

// The body of a sealed frame from `sender` to `receiver`, opened per the docs.
Result<std::string> DocOpen(const Psk& key, const std::string& frame, const Nonce& sender,
                            const Nonce& receiver) {
  auto f = DecodeFrame(frame, kDefaultMaxPayloadBytes);
  if (!f) return std::move(f).error();
  const std::string header = frame.substr(0, kFrameHeaderBytes);
  const uint32_t seq = (uint32_t{static_cast<uint8_t>(f->payload[32])} << 24) |
                       (uint32_t{static_cast<uint8_t>(f->payload[33])} << 16) |
                       (uint32_t{static_cast<uint8_t>(f->payload[34])} << 8) |
                       uint32_t{static_cast<uint8_t>(f->payload[35])};
  return AeadOpen(DocKey(key, "seal", sender, receiver), DocIv(f->type, seq),
                  header + f->payload.substr(0, 36), f->payload.substr(36) + f->mac);
}

Nonce NonceIn(const std::string& hello_frame) {
  Nonce n{};
  std::memcpy(n.data(), hello_frame.data() + kFrameHeaderBytes, kNonceBytes);
  return n;
}

class FileExchange : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qpc-file-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<FileExchanger> Make(const std::string& role, const std::string& peer,
                                      std::optional<Psk> psk = std::nullopt, bool inotify = true) {
    FileOptions o;
    o.directory = dir_;
    o.session = "s1";
    o.role = role;
    o.peer_role = peer;
    o.psk = std::move(psk);
    o.use_inotify = inotify;
    o.poll_interval = 20ms;
    auto x = FileExchanger::Create(std::move(o));
    EXPECT_TRUE(x) << x.error().ToString();
    return std::move(*x);
  }

  size_t Entries() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }

  fs::path P(const std::string& name) const { return dir_ / name; }

  fs::path dir_;
};

TEST_F(FileExchange, ExchangesOneQpEachWayAndLeavesNoFiles) {
  auto a = Make("a", "b");
  auto b = Make("b", "a");
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, MakeEndpoint("b", 1));
  EXPECT_EQ(*rb, MakeEndpoint("a", 1));
  EXPECT_EQ(Entries(), 2u);  // the two lock files, held while the exchangers live
  EXPECT_TRUE(fs::exists(P("s1.a.lock")));
  a.reset();
  b.reset();
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(FileExchange, ExchangesTenThousandQpsWithPskPollingOnly) {
  auto a = Make("a", "b", Key("k"), /*inotify=*/false);
  auto b = Make("b", "a", Key("k"), /*inotify=*/false);
  const auto ea = MakeEndpoint("a", 10000);
  const auto eb = MakeEndpoint("b", 10000);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(eb, 10s); });
  auto ra = a->Exchange(ea, 10s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, eb);
  EXPECT_EQ(*rb, ea);
}

TEST_F(FileExchange, BarrierPassesThenMismatchIsRefused) {
  auto a = Make("a", "b", Key("k"));
  auto b = Make("b", "a", Key("k"));
  ExpectBarrierPassesThenMismatchIsRefused(*a, *b, 1);
}

TEST_F(FileExchange, AbortOutlivesItsWriterAndReachesThePeersBarrier) {
  auto a = Make("a", "b", Key("k"));
  auto b = Make("b", "a", Key("k"));
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  ASSERT_TRUE(a->Exchange(MakeEndpoint("a", 1), 5s));
  ASSERT_TRUE(fb.get());
  a->Abort("ibv_modify_qp RTR failed", 1s);
  a.reset();  // a program aborts, then exits
  ASSERT_TRUE(fs::exists(P("s1.a.abort")));
  auto bar = b->Barrier("rtr", 2s);
  ASSERT_FALSE(bar);
  EXPECT_EQ(bar.error().code, ErrorCode::kProtocol);
  EXPECT_NE(bar.error().detail.find("the peer aborted: ibv_modify_qp RTR failed"),
            std::string::npos)
      << bar.error().ToString();
  b.reset();
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(FileExchange, BarrierBeforeExchangeIsRefused) {
  auto a = Make("a", "b");
  auto r = a->Barrier("rtr", 50ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(FileExchange, WritesOwnerOnlyFilesAndRemovesThemOnTimeout) {
  auto a = Make("a", "b");
  auto fa =
      std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 400ms); });
  ASSERT_TRUE(WaitFor(P("s1.a.hello"), true));
  struct stat st {};
  ASSERT_EQ(::stat(P("s1.a.hello").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto ra = fa.get();
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout);
  EXPECT_NE(ra.error().detail.find("no hello from the peer"), std::string::npos);
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(FileExchange, PeerThatNeverWritesItsDescriptionTimesOutWithinTheDeadline) {
  Plant(P("s1.b.hello"), HelloFrame(*RandomNonce(), false));
  auto a = Make("a", "b");
  const auto start = Clock::now();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout);
  EXPECT_NE(ra.error().detail.find("no description from the peer"), std::string::npos);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1s);
  EXPECT_FALSE(fs::exists(P("s1.a.qpc")));
  EXPECT_FALSE(fs::exists(P("s1.a.hello")));
}

TEST_F(FileExchange, StaleFilesOfAnEarlierRunAreRefused) {
  const Nonce old_b = *RandomNonce();
  const Nonce old_a = *RandomNonce();
  Plant(P("s1.b.hello"), HelloFrame(old_b, false));
  Plant(P("s1.b.qpc"), DescFrame(old_b, old_a, MakeEndpoint("stale", 1)));
  auto a = Make("a", "b");
  auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout);
  EXPECT_NE(ra.error().detail.find("stale"), std::string::npos) << ra.error().detail;
  // The stale files are the peer's: left alone.
  EXPECT_TRUE(fs::exists(P("s1.b.qpc")));
}

TEST_F(FileExchange, StaleFilesDoNotDisturbANewRun) {
  const Nonce old_b = *RandomNonce();
  const Nonce old_a = *RandomNonce();
  Plant(P("s1.a.hello"), HelloFrame(old_a, false));
  Plant(P("s1.a.qpc"), DescFrame(old_a, old_b, MakeEndpoint("stale-a", 1)));
  Plant(P("s1.b.hello"), HelloFrame(old_b, false));
  Plant(P("s1.b.qpc"), DescFrame(old_b, old_a, MakeEndpoint("stale-b", 1)));
  auto a = Make("a", "b");
  // a starts first and sees b's stale files; b arrives while a waits.
  auto fa = std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 5s); });
  ASSERT_TRUE(WaitFor(P("s1.a.qpc"), true));  // a bound its description to b's stale nonce
  auto b = Make("b", "a");
  auto rb = b->Exchange(MakeEndpoint("b", 1), 5s);
  auto ra = fa.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(ra->identity.host, "b");
  EXPECT_EQ(rb->identity.host, "a");
  EXPECT_EQ(Entries(), 2u);  // the lock files
}

TEST_F(FileExchange, WrongKeyIsRefusedWithAuth) {
  auto a = Make("a", "b", Key("one"));
  auto b = Make("b", "a", Key("two"));
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 2s); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  auto rb = fb.get();
  ASSERT_FALSE(ra);
  ASSERT_FALSE(rb);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_EQ(rb.error().code, ErrorCode::kAuth) << rb.error().ToString();
  EXPECT_NE(ra.error().detail.find("key confirmation failed"), std::string::npos)
      << ra.error().detail;
  // Neither wrote a description: nothing derived from it reached the other.
  EXPECT_FALSE(fs::exists(P("s1.a.qpc")));
  EXPECT_FALSE(fs::exists(P("s1.b.qpc")));
}

TEST_F(FileExchange, KeyOnOneSideOnlyIsRefusedWithAuth) {
  // Whichever side reads first fails at once and removes its files; the
  // other then reports the mismatch its peer's hello showed, at its deadline.
  auto a = Make("a", "b", Key("k"));
  auto b = Make("b", "a");
  auto fb =
      std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 500ms); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 500ms);
  auto rb = fb.get();
  ASSERT_FALSE(ra);
  ASSERT_FALSE(rb);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_EQ(rb.error().code, ErrorCode::kAuth) << rb.error().ToString();
  EXPECT_TRUE(ra.error().detail.find("no MAC") != std::string::npos ||
              ra.error().detail.find("the peer's hello says it has none") != std::string::npos)
      << ra.error().detail;
  EXPECT_TRUE(rb.error().detail.find("none is configured on this side") != std::string::npos)
      << rb.error().detail;
}

TEST_F(FileExchange, DocumentedKeySchemeIsAcceptedAndTamperingIsRefused) {
  const Psk key = Key("k");
  for (bool tamper : {false, true}) {
    SCOPED_TRACE(tamper ? "tampered" : "intact");
    auto a = Make("a", "b", key);
    auto fa = std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 3s); });
    // Play b by hand, from the documentation.
    ASSERT_TRUE(WaitFor(P("s1.a.hello"), true));
    const Nonce na = NonceIn(ReadAll(P("s1.a.hello")));
    const Nonce nb = *RandomNonce();
    Plant(P("s1.b.hello"), HelloFrame(nb, true));
    // a's confirmation is what the documentation says it is.
    ASSERT_TRUE(WaitFor(P("s1.a.confirm"), true));
    EXPECT_EQ(ReadAll(P("s1.a.confirm")), DocConfirm(key, na, nb));
    EXPECT_FALSE(fs::exists(P("s1.a.qpc")));  // nothing before ours verified
    Plant(P("s1.b.confirm"), DocConfirm(key, nb, na));
    // a's description: sealed, and it opens as documented.
    ASSERT_TRUE(WaitFor(P("s1.a.qpc"), true));
    const std::string theirs = ReadAll(P("s1.a.qpc"));
    EXPECT_FALSE(DecodeBinary(theirs.substr(kFrameHeaderBytes + 36)));
    auto opened = DocOpen(key, theirs, na, nb);
    ASSERT_TRUE(opened) << opened.error().ToString();
    EXPECT_EQ(*DecodeBinary(*opened), MakeEndpoint("a", 1));
    std::string desc =
        DocSealed(key, FrameType::kEndpoint, nb, na, 0, EncodeBinary(MakeEndpoint("by-hand", 1)));
    if (tamper) desc[desc.size() - kFrameTagBytes - 3] ^= 0x01;  // a byte of the ciphertext
    Plant(P("s1.b.qpc"), desc);
    if (!tamper) {
      ASSERT_TRUE(WaitFor(P("s1.b.qpc"), false)) << fa.get().error().ToString();  // a consumed ours
      fs::remove(P("s1.a.qpc"));  // and we consume a's
    }
    auto ra = fa.get();
    if (tamper) {
      ASSERT_FALSE(ra);
      EXPECT_EQ(ra.error().code, ErrorCode::kAuth);
      EXPECT_NE(ra.error().detail.find("altered"), std::string::npos) << ra.error().detail;
    } else {
      ASSERT_TRUE(ra) << ra.error().ToString();
      EXPECT_EQ(ra->identity.host, "by-hand");
    }
    for (const char* f : {"s1.b.hello", "s1.b.confirm", "s1.b.qpc", "s1.a.qpc"}) fs::remove(P(f));
  }
}

TEST_F(FileExchange, ReplayedConfirmationFromAnotherSessionIsRefused) {
  const Psk key = Key("k");
  // Record an authentic confirmation of b, bound to a fake a's nonce.
  const Nonce fake_a = *RandomNonce();
  Plant(P("s1.a.hello"), HelloFrame(fake_a, true));
  std::string recorded;
  {
    auto b = Make("b", "a", key);
    auto fb =
        std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 300ms); });
    ASSERT_TRUE(WaitFor(P("s1.b.confirm"), true));
    recorded = ReadAll(P("s1.b.confirm"));
    EXPECT_FALSE(fb.get());
    EXPECT_FALSE(fs::exists(P("s1.b.qpc")));  // b never wrote its description
  }
  fs::remove(P("s1.a.hello"));
  ASSERT_FALSE(recorded.empty());
  // Replay it to a real a.
  Plant(P("s1.b.confirm"), recorded);
  auto a = Make("a", "b", key);
  auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("replayed"), std::string::npos) << ra.error().detail;
}

TEST_F(FileExchange, HostileFilesGetDistinctErrors) {
  std::string wrong_version = HelloFrame(*RandomNonce(), false);
  wrong_version[4] = 9;
  Frame big;
  big.type = FrameType::kEndpoint;
  struct Case {
    const char* name;
    std::string bytes;
    ErrorCode code;
    const char* needle;
  };
  const Case cases[] = {
      {"wrong magic", "PK\x03\x04 this is a zip file", ErrorCode::kProtocol,
       "not a qpconnect frame"},
      {"wrong version", wrong_version, ErrorCode::kIncompatible, "version 9"},
      {"oversized length", EncodeFrameHeader(FrameType::kEndpoint, 0, 0xfffffff0u),
       ErrorCode::kProtocol, "oversized"},
      // Not all there (a copy in progress): not there yet, until the deadline.
      {"truncated", HelloFrame(*RandomNonce(), false).substr(0, 20), ErrorCode::kTimeout,
       "s1.b.hello was incomplete (20 of 28 bytes): still being written?"},
      {"header cut", HelloFrame(*RandomNonce(), false).substr(0, 6), ErrorCode::kTimeout,
       "s1.b.hello was incomplete (6 of at least 12 bytes)"},
      {"empty", "", ErrorCode::kTimeout, "incomplete (0 of at least 12 bytes)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Plant(P("s1.b.hello"), c.bytes);
    auto a = Make("a", "b");
    auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
    ASSERT_FALSE(ra);
    EXPECT_EQ(ra.error().code, c.code) << ra.error().ToString();
    EXPECT_NE(ra.error().ToString().find(c.needle), std::string::npos) << ra.error().ToString();
    EXPECT_NE(ra.error().ToString().find("s1.b.hello"), std::string::npos);
  }
}

// Issue 11: a file another writer is still writing (a scheduler copying it, a
// slow shared file system) is read once it is complete, not refused.
TEST_F(FileExchange, FilesBeingWrittenAreReadOnceComplete) {
  auto a = Make("a", "b");
  auto fa = std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 5s); });
  ASSERT_TRUE(WaitFor(P("s1.a.hello"), true));
  const Nonce na = NonceIn(ReadAll(P("s1.a.hello")));
  const Nonce nb = *RandomNonce();
  // Written in place, piece by piece, as a copy would.
  auto write_slowly = [&](const std::string& name, const std::string& bytes) {
    {
      std::ofstream out(P(name), std::ios::binary);
      out << bytes.substr(0, 6);
    }
    fs::permissions(P(name), fs::perms::owner_read | fs::perms::owner_write);
    std::this_thread::sleep_for(150ms);
    {
      std::ofstream out(P(name), std::ios::binary | std::ios::app);
      out << bytes.substr(6, 20);
    }
    std::this_thread::sleep_for(150ms);
    std::ofstream(P(name), std::ios::binary | std::ios::app) << bytes.substr(26);
  };
  write_slowly("s1.b.hello", HelloFrame(nb, false));
  write_slowly("s1.b.qpc", DescFrame(nb, na, MakeEndpoint("copied", 1)));
  ASSERT_TRUE(WaitFor(P("s1.b.qpc"), false));  // a took it
  ASSERT_TRUE(WaitFor(P("s1.a.qpc"), true));
  fs::remove(P("s1.a.qpc"));
  auto ra = fa.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  EXPECT_EQ(ra->identity.host, "copied");
}

// Issue 11: a peer killed during the exchange or after it (during traffic)
// is noticed within a poll interval, through its lock, not at the deadline.
TEST_F(FileExchange, DeadPeerIsNoticedWithinAPollInterval) {
  for (bool in_barrier : {true, false}) {
    SCOPED_TRACE(in_barrier ? "waiting in a barrier" : "polled during traffic");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // b: exchanges, then hangs until killed
      auto b = Make("b", "a", Key("k"));
      if (!b->Exchange(MakeEndpoint("b", 1), 5s)) ::_exit(1);
      ::pause();
      ::_exit(0);
    }
    auto a = Make("a", "b", Key("k"));
    auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
    ASSERT_TRUE(ra) << ra.error().ToString();
    EXPECT_TRUE(a->PollPeer());
    auto killer = std::async(std::launch::async, [&] {
      std::this_thread::sleep_for(200ms);
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
      return Clock::now();
    });
    Result<void> gone = Ok();
    if (in_barrier) {
      gone = a->Barrier("rtr", 30s);
    } else {
      while (gone) {
        std::this_thread::sleep_for(20ms);
        gone = a->PollPeer();
      }
    }
    const auto killed = killer.get();
    ASSERT_FALSE(gone);
    EXPECT_LT(Clock::now() - killed, 1s);
    EXPECT_EQ(gone.error().code, ErrorCode::kIo) << gone.error().ToString();
    EXPECT_NE(gone.error().detail.find("the peer went away: " + P("s1.b.lock").string() +
                                       " is no longer locked"),
              std::string::npos)
        << gone.error().ToString();
    a.reset();
    fs::remove_all(dir_);
    fs::create_directory(dir_);
  }
}

// Issue 11: two processes given the same role are told so.
TEST_F(FileExchange, ASecondProcessWithTheSameRoleIsRefused) {
  auto first = Make("client", "server");
  auto ff =
      std::async(std::launch::async, [&] { return first->Exchange(MakeEndpoint("a", 1), 1s); });
  ASSERT_TRUE(WaitFor(P("s1.client.hello"), true));  // the first holds the lock by then
  auto second = Make("client", "server");
  auto r = second->Exchange(MakeEndpoint("b", 1), 1s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible) << r.error().ToString();
  EXPECT_NE(r.error().detail.find("another live process holds"), std::string::npos);
  EXPECT_NE(r.error().detail.find("role 'client'"), std::string::npos) << r.error().detail;
  EXPECT_TRUE(fs::exists(P("s1.client.hello")));  // the first's files are untouched
  EXPECT_FALSE(ff.get());                         // it waited for a server, in vain
}

TEST_F(FileExchange, FileAboveTheCapIsRefusedBeforeReading) {
  FileOptions o;
  o.directory = dir_;
  o.session = "s1";
  o.max_payload_bytes = 1024;
  auto a = FileExchanger::Create(std::move(o));
  ASSERT_TRUE(a);
  Plant(P("s1.b.hello"), std::string(4096, 'x'));
  auto ra = (*a)->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kProtocol);
  EXPECT_NE(ra.error().detail.find("oversized"), std::string::npos);
}

TEST_F(FileExchange, NonProtobufDescriptionIsAProtocolError) {
  auto a = Make("a", "b");
  auto fa = std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 3s); });
  ASSERT_TRUE(WaitFor(P("s1.a.hello"), true));
  const Nonce na = NonceIn(ReadAll(P("s1.a.hello")));
  const Nonce nb = *RandomNonce();
  Frame f;
  f.type = FrameType::kEndpoint;
  f.flags = kFrameFlagBound;
  f.payload = Bytes(nb) + Bytes(na) + std::string(4, '\0') + "\xff\xff\xff\xff\xff\xff\xff\xff\xff";
  Plant(P("s1.b.hello"), HelloFrame(nb, false));  // a reads the description after the hello
  Plant(P("s1.b.qpc"), EncodeFrame(f));
  auto ra = fa.get();
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kProtocol) << ra.error().ToString();
  EXPECT_NE(ra.error().operation.find("decode peer description"), std::string::npos);
}

TEST_F(FileExchange, SymlinksAndDirectoriesAreRefused) {
  fs::create_symlink("/etc/passwd", P("s1.b.hello"));
  auto a = Make("a", "b");
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth);
  EXPECT_NE(ra.error().detail.find("symbolic link"), std::string::npos);
  fs::remove(P("s1.b.hello"));
  fs::create_directory(P("s1.b.hello"));
  auto rd = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(rd);
  EXPECT_EQ(rd.error().code, ErrorCode::kProtocol);
}

TEST_F(FileExchange, DestructionRemovesOwnFilesAndLeftovers) {
  Plant(P("s1.a.barrier-3"), "leftover");
  Plant(P(".s1.a.qpc.tmp.deadbeef"), "leftover temp");
  Plant(P("s1.b.hello"), "the peer's, not ours");
  {
    auto a = Make("a", "b");
    auto ra = a->Exchange(MakeEndpoint("a", 1), 10ms);  // fails on the peer's garbage
    EXPECT_FALSE(ra);
  }
  EXPECT_FALSE(fs::exists(P("s1.a.barrier-3")));
  EXPECT_FALSE(fs::exists(P(".s1.a.qpc.tmp.deadbeef")));
  EXPECT_TRUE(fs::exists(P("s1.b.hello")));
}

// A measurement, not a check (no doc quotes its figures): time and bytes of
// an exchange of up to 2^20 QPs; run with --gtest_also_run_disabled_tests.
TEST_F(FileExchange, DISABLED_MeasureMillionQps) {
  auto e = MakeEndpoint("x", 1u << 20);
  for (uint32_t i = 0; i < e.qps.size(); ++i) e.qps[i].qpn = (i * 2654435761u + 1) & kQpnMask;
  auto a = Make("a", "b", Key("k"));
  auto b = Make("b", "a", Key("k"));
  const auto start = Clock::now();
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(e, 60s); });
  auto ra = a->Exchange(e, 60s);
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(fb.get());
  std::printf(
      "file: 2^20 QPs exchanged in %lld ms\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
}

TEST_F(FileExchange, OptionsAreChecked) {
  auto make = [&](std::string session, std::string role, std::string peer, fs::path dir) {
    FileOptions o;
    o.directory = std::move(dir);
    o.session = std::move(session);
    o.role = std::move(role);
    o.peer_role = std::move(peer);
    return FileExchanger::Create(std::move(o));
  };
  EXPECT_EQ(make("", "a", "b", dir_).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(make("../x", "a", "b", dir_).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(make("s", "a.b", "b", dir_).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(make("s", "a", "a", dir_).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(make("s", "a", "b", dir_ / "missing").error().code, ErrorCode::kNotFound);
  auto ok = make("s", "server", "client", dir_);
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)->PathOf("server", "qpc"), dir_ / "s.server.qpc");
}

}  // namespace
}  // namespace qpconnect::oob
