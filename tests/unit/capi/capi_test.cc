// SPDX-License-Identifier: MIT
// The C API at the exchange level, without hardware: the byte channel's C
// callbacks over a socketpair between two threads (exchange, barrier, abort,
// timeouts, errors, PSK), the TCP exchanger on loopback, status and error
// objects, the log hook, and the connector's argument checks. Connections
// themselves are proven in the lab (tests/integration/capi_lab_test.cc and
// the examples).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "qpconnect/log.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/qpconnect.h"
#include "unit/capi/fd_channel.h"
#include "unit/oob/exchange_samples.h"

namespace qpconnect {
namespace {

using namespace std::chrono_literals;

std::string Json(const std::string& host) { return oob::EncodeJson(oob::MakeEndpoint(host, 2)); }

// Exchanges the sample description of `host`; returns the host the peer's
// names ("" on failure, with the error in *err).
std::string ExchangeOne(qpc_exchanger* x, const std::string& host, qpc_error** err,
                        int timeout_ms) {
  char* remote = nullptr;
  if (qpc_exchanger_exchange_json(x, Json(host).c_str(), timeout_ms, &remote, err) != QPC_OK) {
    return "";
  }
  auto info = oob::DecodeJson(remote);
  qpc_string_free(remote);
  return info ? info->identity.host : "undecodable";
}

// Two channel exchangers over a socketpair. Destroys them before closing.
class ChannelPair : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a_.fd = fds[0];
    b_.fd = fds[1];
  }
  void TearDown() override {
    qpc_exchanger_free(xa_);
    qpc_exchanger_free(xb_);
    qpc_error_free(err_a_);
    qpc_error_free(err_b_);
    if (a_.fd >= 0) close(a_.fd);
    if (b_.fd >= 0) close(b_.fd);
  }

  qpc_exchanger* Make(testing::FdChannel& c, const qpc_exchanger_options* o = nullptr) {
    qpc_channel ch = testing::ChannelOf(c);
    qpc_exchanger* x = nullptr;
    qpc_error* err = nullptr;
    EXPECT_EQ(qpc_exchanger_from_channel(&ch, o, &x, &err), QPC_OK) << qpc_error_message(err);
    qpc_error_free(err);
    return x;
  }
  void MakeBoth(const qpc_exchanger_options* oa = nullptr,
                const qpc_exchanger_options* ob = nullptr) {
    xa_ = Make(a_, oa);
    xb_ = Make(b_, ob);
    ASSERT_TRUE(xa_ && xb_);
  }

  // Exchanges on both sides at once; returns the host each side received
  // ("" on failure, with the error in err_a_/err_b_).
  std::pair<std::string, std::string> Exchange(int timeout_ms = 5000) {
    auto other =
        std::async(std::launch::async, [&] { return ExchangeOne(xb_, "b", &err_b_, timeout_ms); });
    std::string got_a = ExchangeOne(xa_, "a", &err_a_, timeout_ms);
    return {got_a, other.get()};
  }

  testing::FdChannel a_, b_;
  qpc_exchanger* xa_ = nullptr;
  qpc_exchanger* xb_ = nullptr;
  qpc_error* err_a_ = nullptr;
  qpc_error* err_b_ = nullptr;
};

TEST_F(ChannelPair, ExchangesDescriptionsAndPassesABarrier) {
  MakeBoth();
  auto [got_a, got_b] = Exchange();
  EXPECT_EQ(got_a, "b") << qpc_error_message(err_a_);
  EXPECT_EQ(got_b, "a") << qpc_error_message(err_b_);
  auto bar = std::async(std::launch::async,
                        [&] { return qpc_exchanger_barrier(xb_, "done", 5000, &err_b_); });
  EXPECT_EQ(qpc_exchanger_barrier(xa_, "done", 5000, &err_a_), QPC_OK) << qpc_error_message(err_a_);
  EXPECT_EQ(bar.get(), QPC_OK) << qpc_error_message(err_b_);
}

TEST_F(ChannelPair, CallbacksSeeTheTimeLeftNotMore) {
  MakeBoth();
  auto [got_a, got_b] = Exchange(3000);
  ASSERT_EQ(got_a, "b");
  EXPECT_GE(a_.max_timeout_seen, 0);
  EXPECT_LE(a_.max_timeout_seen, 3000);
  EXPECT_LE(b_.max_timeout_seen, 3000);
}

TEST_F(ChannelPair, BarrierOnAnotherStageIsAProtocolError) {
  MakeBoth();
  auto [got_a, got_b] = Exchange();
  ASSERT_EQ(got_a, "b");
  auto bar = std::async(std::launch::async,
                        [&] { return qpc_exchanger_barrier(xb_, "rts", 5000, &err_b_); });
  EXPECT_EQ(qpc_exchanger_barrier(xa_, "done", 5000, &err_a_), QPC_ERR_PROTOCOL);
  EXPECT_EQ(bar.get(), QPC_ERR_PROTOCOL);
  EXPECT_NE(std::string(qpc_error_message(err_a_)).find("'rts'"), std::string::npos)
      << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, AbortFailsThePeersBarrierAtOnceWithTheReason) {
  MakeBoth();
  auto [got_a, got_b] = Exchange();
  ASSERT_EQ(got_a, "b");
  const auto start = std::chrono::steady_clock::now();
  auto bar = std::async(std::launch::async,
                        [&] { return qpc_exchanger_barrier(xb_, "rts", 20000, &err_b_); });
  qpc_exchanger_abort(xa_, "ibv_modify_qp RTR failed", 2000);
  EXPECT_EQ(bar.get(), QPC_ERR_PROTOCOL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_NE(std::string(qpc_error_message(err_b_)).find("ibv_modify_qp RTR failed"),
            std::string::npos)
      << qpc_error_message(err_b_);
}

TEST_F(ChannelPair, CancelFromAnotherThreadEndsTheBarrierAndTellsThePeer) {
  MakeBoth();
  auto [got_a, got_b] = Exchange();
  ASSERT_EQ(got_a, "b");
  auto bar = std::async(std::launch::async,
                        [&] { return qpc_exchanger_barrier(xa_, "rts", 20000, &err_a_); });
  std::this_thread::sleep_for(200ms);
  const auto cancelled_at = std::chrono::steady_clock::now();
  qpc_exchanger_cancel(xa_, "shutting down");
  EXPECT_EQ(bar.get(), QPC_ERR_IO);
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, 1s);
  EXPECT_EQ(qpc_error_errno(err_a_), ECANCELED) << qpc_error_message(err_a_);
  EXPECT_NE(std::string(qpc_error_message(err_a_)).find("cancelled: shutting down"),
            std::string::npos)
      << qpc_error_message(err_a_);
  // The peer comes to the barrier late: a's barrier message, then its abort.
  EXPECT_EQ(qpc_exchanger_barrier(xb_, "rts", 5000, &err_b_), QPC_ERR_PROTOCOL);
  EXPECT_NE(std::string(qpc_error_message(err_b_)).find("the peer aborted: shutting down"),
            std::string::npos)
      << qpc_error_message(err_b_);
  // Final: the next call fails the same way at once.
  EXPECT_EQ(qpc_exchanger_barrier(xa_, "rts", 20000, &err_a_), QPC_ERR_IO);
  qpc_exchanger_cancel(nullptr, "ignored");
  qpc_exchanger_cancel(xa_, nullptr);
}

TEST_F(ChannelPair, SilentPeerIsATimeout) {
  xa_ = Make(a_);
  ASSERT_TRUE(xa_);
  EXPECT_EQ(ExchangeOne(xa_, "a", &err_a_, 200), "");
  EXPECT_EQ(qpc_error_status(err_a_), QPC_ERR_TIMEOUT) << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, ClosedPeerIsAnIoError) {
  xa_ = Make(a_);
  ASSERT_TRUE(xa_);
  close(b_.fd);
  b_.fd = -1;
  EXPECT_EQ(ExchangeOne(xa_, "a", &err_a_, 2000), "");
  EXPECT_EQ(qpc_error_status(err_a_), QPC_ERR_IO) << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, SendCallbackErrnoIsAnIoErrorWithThatErrnoAndTheChannelName) {
  qpc_exchanger_options o;
  qpc_exchanger_options_init(&o);
  o.channel_name = "my rpc link";
  a_.send_result = EPIPE;
  xa_ = Make(a_, &o);
  ASSERT_TRUE(xa_);
  EXPECT_EQ(ExchangeOne(xa_, "a", &err_a_, 2000), "");
  EXPECT_EQ(qpc_error_status(err_a_), QPC_ERR_IO);
  EXPECT_EQ(qpc_error_errno(err_a_), EPIPE);
  EXPECT_NE(std::string(qpc_error_message(err_a_)).find("my rpc link"), std::string::npos)
      << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, NegativeErrnoAndEtimedoutFromSendAreUnderstood) {
  a_.send_result = -ETIMEDOUT;
  xa_ = Make(a_);
  ASSERT_TRUE(xa_);
  EXPECT_EQ(ExchangeOne(xa_, "a", &err_a_, 2000), "");
  EXPECT_EQ(qpc_error_status(err_a_), QPC_ERR_TIMEOUT) << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, ReceiveClaimingMoreThanAskedIsAnIoError) {
  MakeBoth();
  a_.receive_extra = 1 << 21;  // above any max the exchanger asks for
  auto [got_a, got_b] = Exchange(2000);
  EXPECT_EQ(got_a, "");
  EXPECT_EQ(qpc_error_status(err_a_), QPC_ERR_IO);
  EXPECT_NE(std::string(qpc_error_message(err_a_)).find("more than"), std::string::npos)
      << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, SamePskPassesAndADifferentOneIsAnAuthError) {
  qpc_exchanger_options ka, kb;
  qpc_exchanger_options_init(&ka);
  qpc_exchanger_options_init(&kb);
  ka.psk = "key-one";
  ka.psk_len = 7;
  kb.psk = "key-two";
  kb.psk_len = 7;
  MakeBoth(&ka, &kb);
  auto [got_a, got_b] = Exchange(3000);
  EXPECT_EQ(got_a, "");
  EXPECT_EQ(got_b, "");
  EXPECT_TRUE(qpc_error_status(err_a_) == QPC_ERR_AUTH || qpc_error_status(err_b_) == QPC_ERR_AUTH)
      << qpc_error_message(err_a_) << " / " << qpc_error_message(err_b_);
}

TEST_F(ChannelPair, MatchingPskPasses) {
  qpc_exchanger_options k;
  qpc_exchanger_options_init(&k);
  k.psk = "shared secret";
  k.psk_len = 13;
  MakeBoth(&k, &k);
  auto [got_a, got_b] = Exchange();
  EXPECT_EQ(got_a, "b") << qpc_error_message(err_a_);
  EXPECT_EQ(got_b, "a") << qpc_error_message(err_b_);
}

TEST_F(ChannelPair, PskAsBytesAndAsFileAtOnceIsRefused) {
  qpc_exchanger_options k;
  qpc_exchanger_options_init(&k);
  k.psk = "x";
  k.psk_len = 1;
  k.psk_file = "/nonexistent/key";
  qpc_channel ch = testing::ChannelOf(a_);
  EXPECT_EQ(qpc_exchanger_from_channel(&ch, &k, &xa_, &err_a_), QPC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(xa_, nullptr);
  k.psk = nullptr;
  k.psk_len = 0;
  EXPECT_EQ(qpc_exchanger_from_channel(&ch, &k, &xa_, &err_a_), QPC_ERR_NOT_FOUND)
      << qpc_error_message(err_a_);
}

TEST_F(ChannelPair, LocalJsonThatDoesNotDecodeIsAProtocolErrorAndSendsNothing) {
  xa_ = Make(a_);
  ASSERT_TRUE(xa_);
  char* remote = nullptr;
  EXPECT_EQ(qpc_exchanger_exchange_json(xa_, "{not json", 1000, &remote, &err_a_),
            QPC_ERR_PROTOCOL);
  EXPECT_EQ(remote, nullptr);
  EXPECT_NE(std::string(qpc_error_operation(err_a_)).find("local_json"), std::string::npos);
  pollfd pfd{b_.fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
}

TEST(CapiTcp, ServerOnAnEphemeralPortAndClientExchange) {
  qpc_exchanger* server = nullptr;
  qpc_exchanger* client = nullptr;
  qpc_error* err = nullptr;
  ASSERT_EQ(qpc_exchanger_tcp_server("127.0.0.1", 0, nullptr, &server, &err), QPC_OK)
      << qpc_error_message(err);
  const uint16_t port = qpc_exchanger_tcp_port(server);
  ASSERT_NE(port, 0);
  ASSERT_EQ(qpc_exchanger_tcp_client("127.0.0.1", port, nullptr, &client, &err), QPC_OK);
  EXPECT_EQ(qpc_exchanger_tcp_port(client), port);
  auto s =
      std::async(std::launch::async, [&] { return ExchangeOne(server, "srv", nullptr, 5000); });
  qpc_error* cerr = nullptr;
  EXPECT_EQ(ExchangeOne(client, "cli", &cerr, 5000), "srv") << qpc_error_message(cerr);
  EXPECT_EQ(s.get(), "cli");
  qpc_error_free(cerr);
  qpc_exchanger_free(client);
  qpc_exchanger_free(server);
  qpc_error_free(err);
}

// ---- statuses and errors ----

TEST(CapiStatus, NamesMirrorEveryErrorCode) {
  for (ErrorCode c : {ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kTimeout,
                      ErrorCode::kProtocol, ErrorCode::kIncompatible, ErrorCode::kVerbs,
                      ErrorCode::kIo, ErrorCode::kAuth, ErrorCode::kTraffic}) {
    EXPECT_STREQ(qpc_status_name(static_cast<qpc_status>(static_cast<int>(c) + 1)),
                 ErrorCodeName(c));
  }
}

TEST(CapiStatus, ErrorMessageIsTheWholeLineWithTheCode) {
  qpc_error* err = nullptr;
  qpc_open_options o;
  qpc_open_options_init(&o);
  o.gid_family = static_cast<qpc_gid_family>(3);
  qpc_connector* c = nullptr;
  ASSERT_EQ(qpc_connector_open(&o, &c, &err), QPC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(qpc_error_message(err)),
            "qpc_connector_open: unknown GID family 3 [attribute gid_family] [invalid-argument]");
  EXPECT_STREQ(qpc_error_detail(err), "unknown GID family 3");
  qpc_error_free(err);
}

TEST(CapiConnector, UnknownDeviceIsNotFound) {
  qpc_open_options o;
  qpc_open_options_init(&o);
  o.device = "qpc-no-such-device";
  qpc_connector* c = nullptr;
  qpc_error* err = nullptr;
  const qpc_status s = qpc_connector_open(&o, &c, &err);
  EXPECT_EQ(c, nullptr);
  // No device at all, or none of that name: either way not found (a host
  // whose kernel lacks verbs support may say so as a verbs error).
  EXPECT_TRUE(s == QPC_ERR_NOT_FOUND || s == QPC_ERR_VERBS) << qpc_error_message(err);
  qpc_error_free(err);
}

TEST(CapiConnector, AdoptRefusesANullQpNamingItsIndex) {
  qpc_adopted_qp qps[2] = {{nullptr, nullptr}, {nullptr, nullptr}};
  qpc_connector* c = nullptr;
  qpc_error* err = nullptr;
  EXPECT_EQ(qpc_connector_adopt(qps, 2, nullptr, &c, &err), QPC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qpc_error_message(err)).find("QP 0 is null"), std::string::npos)
      << qpc_error_message(err);
  EXPECT_EQ(qpc_connector_adopt(qps, 0, nullptr, &c, &err), QPC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  qpc_error_free(err);
}

// ---- the log hook ----

struct LogSink {
  std::vector<std::pair<qpc_log_level, std::string>> lines;
};

void Collect(void* user, qpc_log_level level, const char* message) {
  static_cast<LogSink*>(user)->lines.emplace_back(level, message);
}

TEST(CapiLog, HandlerGetsLibraryMessagesAtOrAboveItsLevel) {
  LogSink sink;
  qpc_set_log_handler(Collect, &sink, QPC_LOG_INFO);
  Log(LogLevel::kDebug, "dropped");
  Log(LogLevel::kWarning, "kept");
  qpc_set_log_handler(nullptr, nullptr, QPC_LOG_WARNING);
  Log(LogLevel::kError, "after removal");
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0].first, QPC_LOG_WARNING);
  EXPECT_EQ(sink.lines[0].second, "kept");
}

}  // namespace
}  // namespace qpconnect
