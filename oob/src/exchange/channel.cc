// SPDX-License-Identifier: MIT
#include "qpconnect/oob/channel.h"

#include <algorithm>
#include <utility>

#include "driver.h"
#include "qpconnect/oob/protocol_exchanger.h"
#include "transport.h"

namespace qpconnect::oob {
namespace {

using internal::Clock;

internal::DriverOptions DriverOptionsOf(ChannelOptions& o) {
  internal::DriverOptions d = internal::SharedDriverOptions(o);
  d.role = o.role;
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

// The protocol driver over a StreamPort of the caller's channel, every call
// the driver's.
class ChannelTransport final : public internal::StreamPort, public internal::Transport {
 public:
  ChannelTransport(ByteChannel channel, ChannelOptions o)
      : internal::StreamPort(Sliced(std::move(channel)),
                             o.name.empty() ? std::string("channel") : std::move(o.name)),
        Transport(*this, DriverOptionsOf(o)) {}
};

class ChannelExchanger final : public ProtocolExchanger {
 public:
  explicit ChannelExchanger(std::unique_ptr<ChannelTransport> transport)
      : ProtocolExchanger(std::move(transport)) {}
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
  return std::unique_ptr<Exchanger>(std::make_unique<ChannelExchanger>(
      std::make_unique<ChannelTransport>(std::move(channel), std::move(options))));
}

}  // namespace qpconnect::oob
