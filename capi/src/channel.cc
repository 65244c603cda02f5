// SPDX-License-Identifier: MIT
// The C byte channel (qpc_channel: two C callbacks and a user pointer) mapped
// onto oob::ByteChannel (qpconnect/oob/channel.h): deadlines become the
// milliseconds left, errno-style returns become Errors.
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>

#include "internal.h"
#include "qpconnect/oob/channel.h"

namespace qpconnect::capi {
namespace {

using Clock = std::chrono::steady_clock;

// What is left of `deadline` in whole milliseconds (rounded up, so a wait of
// "0 ms" is only asked for once the deadline has passed), clamped to int.
int MillisLeft(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

// An errno-style failure reported by a callback (`err` positive or negative).
Error CallbackError(const char* callback, long err) {
  const int e = static_cast<int>(err < 0 ? -err : err);
  if (e == ETIMEDOUT) {
    return Error{ErrorCode::kTimeout, 0, callback, "", "the deadline passed"};
  }
  return ErrnoError(ErrorCode::kIo, e, callback, "the channel callback failed");
}

oob::ByteChannel ToByteChannel(const qpc_channel& c) {
  oob::ByteChannel ch;
  ch.send = [c](std::string_view bytes, Clock::time_point deadline) -> Result<void> {
    const int rc = c.send(c.user, bytes.data(), bytes.size(), MillisLeft(deadline));
    if (rc != 0) return CallbackError("qpc_channel.send", rc);
    return Ok();
  };
  ch.receive = [c](char* buf, size_t max_bytes, Clock::time_point deadline) -> Result<size_t> {
    const ssize_t n = c.receive(c.user, buf, max_bytes, MillisLeft(deadline));
    if (n < 0) return CallbackError("qpc_channel.receive", n);
    if (static_cast<size_t>(n) > max_bytes) {
      return Error{ErrorCode::kIo, 0, "qpc_channel.receive", "",
                   "returned " + std::to_string(n) + " bytes, more than the " +
                       std::to_string(max_bytes) + " asked for"};
    }
    return static_cast<size_t>(n);
  };
  return ch;
}

}  // namespace
}  // namespace qpconnect::capi

using namespace qpconnect;        // NOLINT: the C entry point below
using namespace qpconnect::capi;  // NOLINT

extern "C" qpc_status qpc_exchanger_from_channel(const qpc_channel* channel,
                                                 const qpc_exchanger_options* options,
                                                 qpc_exchanger** out, qpc_error** error) {
  static constexpr const char* kFn = "qpc_exchanger_from_channel";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (out == nullptr) return NullArgument(kFn, "out");
    if (channel == nullptr) return NullArgument(kFn, "channel");
    if (channel->send == nullptr) return NullArgument(kFn, "channel->send");
    if (channel->receive == nullptr) return NullArgument(kFn, "channel->receive");
    auto s = SettingsFrom(kFn, options);
    if (!s) return std::move(s).error();
    oob::ChannelOptions o;
    if (options != nullptr && options->channel_name != nullptr &&
        options->channel_name[0] != '\0') {
      o.name = options->channel_name;
    }
    if (options != nullptr && options->both_send_first != 0) {
      o.order = oob::SendOrder::kBothFirst;
    }
    o.psk = std::move(s->psk);
    o.max_payload_bytes = s->max_payload_bytes;
    auto x = oob::CreateChannelExchanger(ToByteChannel(*channel), std::move(o));
    if (!x) return std::move(x).error();
    return Emit(out, std::move(*x));
  });
}
