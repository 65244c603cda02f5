#include "qpconnect/oob/channel.h"

#include <algorithm>
#include <utility>

#include "driver.h"

namespace qpconnect::oob {
namespace {

using internal::Clock;

internal::DriverOptions DriverOptionsOf(ChannelOptions& o) {
  internal::DriverOptions d;
  d.psk = std::move(o.psk);
  d.role = o.role;
  d.max_payload_bytes = o.max_payload_bytes;
  d.max_peer_qps = o.max_peer_qps;
  d.order = o.order;
  return d;
}

// The caller's receive() asked for at most kInterruptPoll at a time, up to
// the real deadline, so that a stop (Cancel(), the interrupt flag) ends a
// wait for the peer within about that even inside the caller's function. A
// send cannot be sliced (how much of a timed-out send went is unknown).
ByteChannel Sliced(ByteChannel c) {
  c.receive = [receive = std::move(c.receive)](char* buf, size_t max,
                                               Clock::time_point deadline) -> Result<size_t> {
    for (;;) {
      const auto now = Clock::now();
      if (now >= deadline) return receive(buf, max, deadline);  // a poll
      auto got = receive(buf, max, std::min(deadline, now + kInterruptPoll));
      if (got || got.error().code != ErrorCode::kTimeout || Clock::now() >= deadline ||
          internal::StopRequested()) {
        return got;
      }
    }
  };
  return c;
}

// The protocol driver over a StreamPort of the caller's channel.
class ChannelExchanger final : public Exchanger {
 public:
  ChannelExchanger(ByteChannel channel, ChannelOptions o)
      : port_(Sliced(std::move(channel)),
              o.name.empty() ? std::string("channel") : std::move(o.name)),
        driver_(DriverOptionsOf(o)) {}

  Result<EndpointInfo> Exchange(const EndpointInfo& local,
                                std::chrono::milliseconds deadline) override {
    return driver_.Exchange(port_, local, Clock::now() + deadline);
  }

  Result<void> Barrier(std::string_view stage, std::chrono::milliseconds deadline) override {
    return driver_.Barrier(port_, stage, Clock::now() + deadline);
  }

  void Abort(std::string_view reason, std::chrono::milliseconds deadline) override {
    driver_.Abort(port_, reason, Clock::now() + deadline);
  }

  Result<void> PollPeer() override { return driver_.PollPeer(port_); }
  Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                      std::chrono::milliseconds deadline) override {
    return driver_.BarrierWithNote(port_, stage, note, Clock::now() + deadline);
  }
  std::optional<std::string> PeerStage() override { return driver_.PeerStage(); }

  void Cancel(std::string_view reason) override { driver_.Cancel(reason); }

  ExchangeStats stats() const override { return driver_.stats(); }

 private:
  internal::StreamPort port_;
  internal::ProtocolDriver driver_;
};

}  // namespace

Result<std::unique_ptr<Exchanger>> CreateChannelExchanger(ByteChannel channel,
                                                          ChannelOptions options) {
  if (!channel.send || !channel.receive) {
    return internal::MakeError(
        ErrorCode::kInvalidArgument, "channel exchanger",
        std::string("the ByteChannel has no ") + (channel.send ? "receive" : "send") + " function");
  }
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "channel exchanger options"));
  return std::unique_ptr<Exchanger>(
      std::make_unique<ChannelExchanger>(std::move(channel), std::move(options)));
}

}  // namespace qpconnect::oob
