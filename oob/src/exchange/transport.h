// SPDX-License-Identifier: MIT
// A transport of the protocol driver: the FramePort that moves its frames
// (driver.h) and the driver that runs the protocol over it, called by the
// public ProtocolExchanger (qpconnect/oob/protocol_exchanger.h) with each
// deadline as a time point. Each call is by default the driver's over the
// port; a transport overrides the calls it adds to (the file exchanger
// removes its files, tcp closes its connection and greets early). Private to
// src/exchange.
//
// Thread-safety: the driver's: one thread at a time, Cancel() from any.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "driver.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/exchanger.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

class Transport {
 public:
  // `port`: the transport's FramePort, most often the object itself (a
  // class that derives from both); it must outlive this.
  Transport(FramePort& port, DriverOptions options) : port_(port), driver_(std::move(options)) {}
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Exchanger::Prepare(). Default: nothing worth doing early (Ok), as the
  // interface's default.
  virtual Result<void> Prepare(Clock::time_point deadline) {
    (void)deadline;
    return Ok();
  }
  virtual Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline) {
    return driver_.Exchange(port_, local, deadline);
  }
  virtual Result<void> Barrier(std::string_view stage, Clock::time_point deadline) {
    return driver_.Barrier(port_, stage, deadline);
  }
  virtual Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                              Clock::time_point deadline) {
    return driver_.BarrierWithNote(port_, stage, note, deadline);
  }
  virtual void Abort(std::string_view reason, Clock::time_point deadline) {
    driver_.Abort(port_, reason, deadline);
  }
  // Exchanger::Addresses(). Default: a channel without addresses (empty).
  virtual std::vector<Gid> Addresses() const { return {}; }

  Result<void> PollPeer() { return driver_.PollPeer(port_); }
  std::optional<std::string> PeerStage() { return driver_.PeerStage(); }
  void Cancel(std::string_view reason) { driver_.Cancel(reason); }
  const ExchangeStats& stats() const { return driver_.stats(); }

 protected:
  ProtocolDriver& driver() { return driver_; }
  const ProtocolDriver& driver() const { return driver_; }

 private:
  FramePort& port_;
  ProtocolDriver driver_;
};

}  // namespace qpconnect::oob::internal
