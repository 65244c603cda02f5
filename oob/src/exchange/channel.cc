#include "qpconnect/oob/channel.h"

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

// The protocol driver over a StreamPort of the caller's channel.
class ChannelExchanger final : public Exchanger {
 public:
  ChannelExchanger(ByteChannel channel, ChannelOptions o)
      : port_(std::move(channel), o.name.empty() ? std::string("channel") : std::move(o.name)),
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
