// SPDX-License-Identifier: MIT
// ProtocolExchanger: the base of the exchangers that speak qpconnect's
// out-of-band protocol (docs/oob.md) over a transport: tcp.h, file.h,
// stdio.h, and channel.h's over a caller's byte channel.
//
// Every call of the Exchanger interface keeps the contract written there
// (qpconnect/exchanger.h), and is the one protocol driver's over the
// transport, the deadline counted from the call. What a transport adds (its
// files, its connection, what it can notice of a peer that went away) is
// said on its class. Beyond the interface's defaults: Barrier() can carry a
// note (BarrierWithNote()), PeerStage() and stats() are kept, and Cancel()
// sends the peer an abort where a session is under way. Prepare() greets
// early only where the transport says so (tcp); elsewhere it does nothing.
//
// Thread-safety: as every Exchanger: one thread at a time, but Cancel() from
// any thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/exchanger.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

namespace internal {
class Transport;  // src/exchange/transport.h
}

class ProtocolExchanger : public Exchanger {
 public:
  ~ProtocolExchanger() override;
  ProtocolExchanger(const ProtocolExchanger&) = delete;
  ProtocolExchanger& operator=(const ProtocolExchanger&) = delete;

  Result<void> Prepare(std::chrono::milliseconds deadline) override;
  Result<EndpointInfo> Exchange(const EndpointInfo& local,
                                std::chrono::milliseconds deadline) override;
  Result<void> Barrier(std::string_view stage, std::chrono::milliseconds deadline) override;
  Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                      std::chrono::milliseconds deadline) override;
  void Abort(std::string_view reason, std::chrono::milliseconds deadline) override;
  void Cancel(std::string_view reason) override;
  Result<void> PollPeer() override;
  std::optional<std::string> PeerStage() override;
  ExchangeStats stats() const override;
  std::vector<Gid> Addresses() const override;

 protected:
  explicit ProtocolExchanger(std::unique_ptr<internal::Transport> transport);
  internal::Transport& transport() const { return *transport_; }

 private:
  std::unique_ptr<internal::Transport> transport_;
};

}  // namespace qpconnect::oob
