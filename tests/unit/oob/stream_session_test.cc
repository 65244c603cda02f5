// SPDX-License-Identifier: MIT
// The message session of a long-lived stream (stream_session.h): hellos both
// ways, messages right behind the hello without a key, key confirmation and
// sealed messages with one, and every refusal: a key on one side only,
// another key, another protocol or version (naming both), an exchange's
// hello, a role clash, garbage, truncated and oversized frames, replayed,
// reordered and altered messages; bytes fed one at a time; random bytes.
#include "qpconnect/oob/stream_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "exchange_samples.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Kind = StreamInput::Kind;

Psk Key(char fill = 'k') { return *Psk::FromBytes(std::string(32, fill)); }

StreamOptions Options(OobRole role, std::optional<Psk> psk = std::nullopt, uint16_t version = 4,
                      std::string protocol = "qpcm") {
  StreamOptions o;
  o.protocol = std::move(protocol);
  o.version = version;
  o.role = role;
  o.psk = std::move(psk);
  o.max_message_bytes = 4096;
  o.channel = role == OobRole::kClient ? "server" : "client";
  return o;
}

std::unique_ptr<StreamSession> Make(StreamOptions o) {
  auto s = StreamSession::Create(std::move(o));
  EXPECT_TRUE(s) << s.error().ToString();
  return s ? std::move(*s) : nullptr;
}

// Everything `s` takes from `bytes`, in order, until a frame is incomplete
// or refused (then `error` holds why).
struct Taken {
  std::vector<StreamInput> inputs;
  std::vector<std::string> bodies;  // copies: the views die with the next Take
  size_t consumed = 0;
  std::optional<Error> error;
};
Taken TakeAll(StreamSession& s, std::string_view bytes) {
  Taken t;
  for (;;) {
    auto in = s.Take(bytes.substr(t.consumed));
    if (!in) {
      t.error = in.error();
      return t;
    }
    if (in->kind == Kind::kIncomplete) return t;
    t.consumed += in->consumed;
    t.bodies.emplace_back(in->body);
    t.inputs.push_back(std::move(*in));
  }
}

// Runs both hellos (and with keys both confirms); false if either refused.
struct Pair {
  std::unique_ptr<StreamSession> client, server;
  std::optional<Error> client_error, server_error;

  Pair(StreamOptions c, StreamOptions s) : client(Make(std::move(c))), server(Make(std::move(s))) {}

  bool Handshake() {
    auto to_server = TakeAll(*server, client->Hello());
    auto to_client = TakeAll(*client, server->Hello());
    server_error = to_server.error;
    client_error = to_client.error;
    if (server_error || client_error) return false;
    // With keys, each hello's reply is that side's confirm.
    std::string server_confirm = to_server.inputs.at(0).reply;
    std::string client_confirm = to_client.inputs.at(0).reply;
    if (server_confirm.empty() != client_confirm.empty()) return false;
    if (server_confirm.empty()) return true;
    auto c = TakeAll(*client, server_confirm);
    auto s = TakeAll(*server, client_confirm);
    client_error = c.error;
    server_error = s.error;
    return !client_error && !server_error;
  }
};

std::string MessageFrame(StreamSession& s, std::string_view body) {
  std::string out;
  auto r = s.AppendMessage(body, out);
  EXPECT_TRUE(r) << r.error().ToString();
  return out;
}

TEST(StreamSession, PlainHellosCrossAndMessagesFollowTheHelloInOneWrite) {
  auto client = Make(Options(OobRole::kClient));
  auto server = Make(Options(OobRole::kServer));
  ASSERT_TRUE(client->CanSend());  // before the peer's hello
  EXPECT_FALSE(client->Established());
  // One write: hello, then three requests, before the server said anything.
  std::string bytes = client->Hello();
  for (const char* body : {"REQ 1", "REQ 2", "REQ 3"}) bytes += MessageFrame(*client, body);
  auto got = TakeAll(*server, bytes);
  ASSERT_FALSE(got.error) << got.error->ToString();
  ASSERT_EQ(got.inputs.size(), 4u);
  EXPECT_EQ(got.inputs[0].kind, Kind::kHello);
  EXPECT_TRUE(got.inputs[0].reply.empty());
  EXPECT_EQ(got.bodies[1], "REQ 1");
  EXPECT_EQ(got.bodies[3], "REQ 3");
  EXPECT_EQ(got.consumed, bytes.size());
  EXPECT_TRUE(server->Established());
  // Hello 12 + 16 + 2 + "qpcm"; a message 12 bytes + its body.
  EXPECT_EQ(client->Hello().size(), 34u);
  EXPECT_EQ(MessageFrame(*client, "abc").size(), 15u);
  // The other way.
  auto back = TakeAll(*client, server->Hello() + MessageFrame(*server, "REP 1"));
  ASSERT_FALSE(back.error);
  EXPECT_EQ(back.bodies.back(), "REP 1");
  EXPECT_TRUE(client->Established());
}

TEST(StreamSession, APlainMessageIsAViewOfTheInput) {
  auto client = Make(Options(OobRole::kClient));
  auto server = Make(Options(OobRole::kServer));
  std::string bytes = client->Hello() + MessageFrame(*client, "zero copies");
  auto hello = server->Take(bytes);
  ASSERT_TRUE(hello);
  auto msg = server->Take(std::string_view(bytes).substr(hello->consumed));
  ASSERT_TRUE(msg);
  EXPECT_EQ(msg->body, "zero copies");
  EXPECT_EQ(msg->body.data(), bytes.data() + hello->consumed + kFrameHeaderBytes);
}

TEST(StreamSession, DocumentedPlainFramesAreAccepted) {
  // docs/oob.md, "Message streams": the hello's payload is nonce (16) ||
  // version (2, big-endian) || protocol name; a message is a frame of type 6
  // whose payload is the body; the role in the flags.
  auto server = Make(Options(OobRole::kServer));
  std::string hello = EncodeFrameHeader(FrameType::kHello, kFrameFlagRoleClient, 16 + 2 + 4);
  hello += std::string(16, '\x42') + std::string("\x00\x04", 2) + "qpcm";
  std::string msg = EncodeFrameHeader(static_cast<FrameType>(6), kFrameFlagRoleClient, 5) + "hello";
  auto got = TakeAll(*server, hello + msg);
  ASSERT_FALSE(got.error) << got.error->ToString();
  ASSERT_EQ(got.bodies.size(), 2u);
  EXPECT_EQ(got.bodies[1], "hello");
}

TEST(StreamSession, KeyedSessionsConfirmThenSealAndCountMessagesInOrder) {
  Pair p(Options(OobRole::kClient, Key()), Options(OobRole::kServer, Key()));
  EXPECT_FALSE(p.client->CanSend());
  std::string early;
  auto refused = p.client->AppendMessage("too early", early);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(early.empty());
  ASSERT_TRUE(p.Handshake()) << (p.client_error ? p.client_error->ToString() : "")
                             << (p.server_error ? p.server_error->ToString() : "");
  EXPECT_TRUE(p.client->CanSend() && p.server->CanSend());
  EXPECT_TRUE(p.client->Established() && p.server->Established());
  // Many messages each way, in batches as a link writes them.
  constexpr int kMessages = 20000;
  std::string batch;
  int received = 0;
  for (int i = 0; i < kMessages; ++i) {
    const std::string body = "message " + std::to_string(i);
    batch += MessageFrame(*p.client, body);
    if (i % 97 == 96 || i == kMessages - 1) {
      auto got = TakeAll(*p.server, batch);
      ASSERT_FALSE(got.error) << got.error->ToString();
      ASSERT_EQ(got.consumed, batch.size());
      for (const auto& b : got.bodies) EXPECT_EQ(b, "message " + std::to_string(received++));
      batch.clear();
    }
  }
  EXPECT_EQ(received, kMessages);
  // Sealed: no body in clear; 12 + 36 + body + 16 bytes.
  const std::string sealed = MessageFrame(*p.server, "secret body");
  EXPECT_EQ(sealed.find("secret"), std::string::npos);
  EXPECT_EQ(sealed.size(), 12u + 36u + 11u + 16u);
  auto back = TakeAll(*p.client, sealed);
  ASSERT_FALSE(back.error);
  EXPECT_EQ(back.bodies.at(0), "secret body");
}

TEST(StreamSession, AKeyOnOneSideOnlyIsRefusedByBoth) {
  for (bool client_keyed : {true, false}) {
    Pair p(Options(OobRole::kClient, client_keyed ? std::optional<Psk>(Key()) : std::nullopt),
           Options(OobRole::kServer, client_keyed ? std::nullopt : std::optional<Psk>(Key())));
    EXPECT_FALSE(p.Handshake());
    ASSERT_TRUE(p.client_error && p.server_error);
    EXPECT_EQ(p.client_error->code, ErrorCode::kAuth) << p.client_error->ToString();
    EXPECT_EQ(p.server_error->code, ErrorCode::kAuth) << p.server_error->ToString();
    const std::string& keyed = client_keyed ? p.client_error->detail : p.server_error->detail;
    const std::string& keyless = client_keyed ? p.server_error->detail : p.client_error->detail;
    EXPECT_NE(keyed.find("this side requires a pre-shared key"), std::string::npos) << keyed;
    EXPECT_NE(keyless.find("none is configured on this side"), std::string::npos) << keyless;
  }
}

TEST(StreamSession, AnotherKeyFailsTheConfirmWithKAuthAndSendsNothing) {
  Pair p(Options(OobRole::kClient, Key('a')), Options(OobRole::kServer, Key('b')));
  EXPECT_FALSE(p.Handshake());
  ASSERT_TRUE(p.client_error && p.server_error);
  EXPECT_EQ(p.client_error->code, ErrorCode::kAuth);
  EXPECT_NE(p.client_error->detail.find("key confirmation failed"), std::string::npos);
  EXPECT_FALSE(p.client->CanSend());
  EXPECT_FALSE(p.server->CanSend());
  // A spent session answers every later Take with the same error.
  auto again = p.client->Take(p.server->Hello());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().detail, p.client_error->detail);
}

TEST(StreamSession, AnotherVersionIsRefusedNamingBoth) {
  Pair p(Options(OobRole::kClient, std::nullopt, 4), Options(OobRole::kServer, std::nullopt, 5));
  EXPECT_FALSE(p.Handshake());
  ASSERT_TRUE(p.client_error && p.server_error);
  EXPECT_EQ(p.client_error->code, ErrorCode::kIncompatible);
  EXPECT_EQ(p.client_error->attribute, "version");
  EXPECT_EQ(p.client_error->detail,
            "the peer speaks qpcm version 5; this side speaks version 4 (the peer runs a newer "
            "qpconnect: upgrade this side)");
  EXPECT_EQ(p.server_error->detail,
            "the peer speaks qpcm version 4; this side speaks version 5 (the peer runs an older "
            "qpconnect: upgrade it)");
  // The version is checked before the key: a keyed pair of two versions
  // says so too.
  Pair k(Options(OobRole::kClient, Key(), 4), Options(OobRole::kServer, std::nullopt, 5));
  EXPECT_FALSE(k.Handshake());
  EXPECT_EQ(k.client_error->attribute, "version");
}

TEST(StreamSession, AnotherProtocolOrAnExchangeHelloIsRefused) {
  Pair p(Options(OobRole::kClient), Options(OobRole::kServer, std::nullopt, 4, "other"));
  EXPECT_FALSE(p.Handshake());
  ASSERT_TRUE(p.client_error);
  EXPECT_EQ(p.client_error->code, ErrorCode::kIncompatible);
  EXPECT_EQ(p.client_error->attribute, "protocol");
  EXPECT_NE(p.client_error->detail.find("'other' version 4"), std::string::npos);
  EXPECT_NE(p.client_error->detail.find("'qpcm' version 4"), std::string::npos);

  // An endpoint exchange's hello (16-byte nonce, no tail).
  auto server = Make(Options(OobRole::kServer));
  std::string exchange_hello = EncodeFrameHeader(FrameType::kHello, 0, 16) + std::string(16, 'n');
  auto got = server->Take(exchange_hello);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(got.error().detail.find("endpoint exchange"), std::string::npos) << got.error().detail;
}

TEST(StreamSession, AnExchangerRefusesAStreamHelloNamingIt) {
  // The stream's hello reaches a qp-connect style exchanger over a channel.
  auto client = Make(Options(OobRole::kClient));
  std::string input = client->Hello();
  size_t at = 0;
  ByteChannel channel;
  channel.send = [](std::string_view, std::chrono::steady_clock::time_point) -> Result<void> {
    return Ok();
  };
  channel.receive = [&](char* buf, size_t max, std::chrono::steady_clock::time_point) {
    const size_t n = std::min(max, input.size() - at);
    std::copy_n(input.data() + at, n, buf);
    at += n;
    return Result<size_t>(n);
  };
  auto x = CreateChannelExchanger(std::move(channel), ChannelOptions{});
  ASSERT_TRUE(x);
  auto r = (*x)->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible) << r.error().ToString();
  EXPECT_NE(r.error().detail.find("'qpcm' message stream"), std::string::npos)
      << r.error().ToString();
}

TEST(StreamSession, TwoClientsRefuseEachOther) {
  Pair p(Options(OobRole::kClient), Options(OobRole::kClient));
  EXPECT_FALSE(p.Handshake());
  ASSERT_TRUE(p.client_error);
  EXPECT_EQ(p.client_error->code, ErrorCode::kIncompatible);
  EXPECT_EQ(p.client_error->attribute, "role");
}

TEST(StreamSession, GarbageAndAnOlderFrameVersionAreRefusedAtOnce) {
  auto server = Make(Options(OobRole::kServer));
  auto http = server->Take("GET / HTTP/1.0\r\n\r\n");
  ASSERT_FALSE(http);
  EXPECT_EQ(http.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(http.error().attribute, "magic");
  EXPECT_NE(http.error().detail.find("looks like HTTP"), std::string::npos);
  // One wrong byte is enough: nothing more is waited for.
  auto one = Make(Options(OobRole::kServer))->Take("G");
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().attribute, "magic");
  // libqpcm's own framing before this version: length, HELLO, "QPCM".
  auto old = Make(Options(OobRole::kServer))
                 ->Take(std::string("\x00\x00\x00\x1b\x01QPCM\x00\x03\x00\x00", 13) +
                        std::string(16, '\0'));
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().detail.find("older libqpcm"), std::string::npos) << old.error().detail;
  std::string v1 = Make(Options(OobRole::kClient))->Hello();
  v1[4] = 1;
  auto older = Make(Options(OobRole::kServer))->Take(v1);
  ASSERT_FALSE(older);
  EXPECT_EQ(older.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(older.error().detail.find("unsupported frame version 1; this build speaks version 2"),
            std::string::npos);
}

TEST(StreamSession, BytesOneAtATimeAreTakenOnceWhole) {
  auto client = Make(Options(OobRole::kClient));
  auto server = Make(Options(OobRole::kServer));
  const std::string bytes = client->Hello() + MessageFrame(*client, "piece by piece");
  std::string fed;
  std::vector<std::string> bodies;
  size_t at = 0;
  for (char c : bytes) {
    fed += c;
    auto size = server->WholeFrameBytes(std::string_view(fed).substr(at));
    ASSERT_TRUE(size);
    auto in = server->Take(std::string_view(fed).substr(at));
    ASSERT_TRUE(in) << in.error().ToString();
    EXPECT_EQ(in->consumed, *size);
    if (in->kind == Kind::kIncomplete) continue;
    at += in->consumed;
    bodies.emplace_back(in->body);
  }
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[1], "piece by piece");
}

TEST(StreamSession, OversizedFramesAreRefusedFromTheHeader) {
  // Before the hello: 2 KiB.
  auto server = Make(Options(OobRole::kServer));
  auto big_hello = server->Take(EncodeFrameHeader(FrameType::kHello, 0, 4096));
  ASSERT_FALSE(big_hello);
  EXPECT_EQ(big_hello.error().attribute, "length");
  EXPECT_NE(big_hello.error().detail.find("oversized"), std::string::npos);
  // After: the message cap (4096 here), announced 4 GiB costs nothing.
  auto client = Make(Options(OobRole::kClient));
  auto s2 = Make(Options(OobRole::kServer));
  ASSERT_TRUE(s2->Take(client->Hello()));
  auto huge = s2->Take(EncodeFrameHeader(FrameType::kStream, kFrameFlagRoleClient, 0xffffffffu));
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().attribute, "length");
  // This side does not send what the peer would refuse.
  std::string out;
  auto too_big = client->AppendMessage(std::string(4097, 'x'), out);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST(StreamSession, FramesOutOfPlaceAreRefused) {
  auto client = Make(Options(OobRole::kClient));
  auto server = Make(Options(OobRole::kServer));
  // A message before the hello.
  auto first = server->Take(MessageFrame(*client, "REQ"));
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, ErrorCode::kProtocol);
  EXPECT_NE(first.error().detail.find("expected the peer's hello"), std::string::npos);
  // A second hello.
  auto s2 = Make(Options(OobRole::kServer));
  auto twice = TakeAll(*s2, client->Hello() + client->Hello());
  ASSERT_TRUE(twice.error);
  EXPECT_NE(twice.error->detail.find("second hello"), std::string::npos) << twice.error->detail;
  // Flags of a keyed peer on a plain stream.
  auto s3 = Make(Options(OobRole::kServer));
  auto flagged =
      TakeAll(*s3, client->Hello() + EncodeFrameHeader(FrameType::kStream, kFrameFlagBound, 0));
  ASSERT_TRUE(flagged.error);
  EXPECT_EQ(flagged.error->attribute, "flags");
}

TEST(StreamSession, ReplayedReorderedAlteredAndReflectedMessagesAreRefused) {
  auto keyed = [] {
    auto p =
        std::make_unique<Pair>(Options(OobRole::kClient, Key()), Options(OobRole::kServer, Key()));
    EXPECT_TRUE(p->Handshake());
    return p;
  };
  {
    auto p = keyed();
    const std::string m0 = MessageFrame(*p->client, "zero");
    auto replay = TakeAll(*p->server, m0 + m0);
    ASSERT_TRUE(replay.error);
    EXPECT_EQ(replay.error->code, ErrorCode::kAuth);
    EXPECT_NE(replay.error->detail.find("sequence number 0, expected 1"), std::string::npos)
        << replay.error->detail;
  }
  {
    auto p = keyed();
    const std::string m0 = MessageFrame(*p->client, "zero");
    const std::string m1 = MessageFrame(*p->client, "one");
    auto reorder = TakeAll(*p->server, m1 + m0);
    ASSERT_TRUE(reorder.error);
    EXPECT_NE(reorder.error->detail.find("replayed or reordered"), std::string::npos);
  }
  {
    auto p = keyed();
    std::string m0 = MessageFrame(*p->client, "zero");
    m0[m0.size() - 20] ^= 1;  // a ciphertext byte
    auto altered = TakeAll(*p->server, m0);
    ASSERT_TRUE(altered.error);
    EXPECT_EQ(altered.error->code, ErrorCode::kAuth);
    EXPECT_NE(altered.error->detail.find("does not decrypt and verify"), std::string::npos);
  }
  {
    // Our own message played back to us: refused for its role (declared
    // roles), or without roles by the other direction's key.
    auto p = keyed();
    auto reflected = TakeAll(*p->client, MessageFrame(*p->client, "mine"));
    ASSERT_TRUE(reflected.error);
    EXPECT_EQ(reflected.error->attribute, "role");
    Pair q(Options(OobRole::kNone, Key()), Options(OobRole::kNone, Key()));
    ASSERT_TRUE(q.Handshake());
    auto mirrored = TakeAll(*q.client, MessageFrame(*q.client, "mine"));
    ASSERT_TRUE(mirrored.error);
    EXPECT_EQ(mirrored.error->code, ErrorCode::kAuth);
  }
  {
    // A message of another session (other nonces, other keys).
    auto p = keyed();
    auto q = keyed();
    auto stale = TakeAll(*p->server, MessageFrame(*q->client, "elsewhere"));
    ASSERT_TRUE(stale.error);
    EXPECT_EQ(stale.error->code, ErrorCode::kAuth);
  }
  {
    // A plain message on a keyed stream.
    auto p = keyed();
    auto plain = Make(Options(OobRole::kClient));
    auto clear = TakeAll(*p->server, MessageFrame(*plain, "clear"));
    ASSERT_TRUE(clear.error);
    EXPECT_EQ(clear.error->code, ErrorCode::kAuth);
  }
}

TEST(StreamSession, BadOptionsAreRefused) {
  for (const char* name : {"", "two words", "a-name-that-is-longer-than-32-bytes"}) {
    auto o = Options(OobRole::kClient);
    o.protocol = name;
    auto s = StreamSession::Create(std::move(o));
    ASSERT_FALSE(s) << name;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  }
  auto o = Options(OobRole::kClient);
  o.max_message_bytes = 10;
  EXPECT_FALSE(StreamSession::Create(std::move(o)));
}

TEST(StreamSession, RandomBytesNeverCrash) {
  std::mt19937 rng(38);
  for (bool keyed : {false, true}) {
    std::optional<Psk> psk;
    if (keyed) psk = Key();
    std::string good = Make(Options(OobRole::kClient, psk))->Hello();
    {
      auto s = Make(Options(OobRole::kServer, psk));
      auto t = TakeAll(*s, good);
      ASSERT_FALSE(t.error);
    }
    for (int i = 0; i < 3000; ++i) {
      auto s = Make(Options(OobRole::kServer, psk));
      std::string b = good + std::string("\x89QPC\x02\x06\x10\x00\x00\x00\x00\x05hello", 17);
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng());
      if (rng() % 3 == 0) b.resize(rng() % b.size());
      (void)TakeAll(*s, b);
    }
  }
}

}  // namespace
}  // namespace qpconnect::oob
