// SPDX-License-Identifier: MIT
#include "qpconnect/oob/protocol_exchanger.h"

#include <utility>

#include "transport.h"

namespace qpconnect::oob {

using internal::Clock;

ProtocolExchanger::ProtocolExchanger(std::unique_ptr<internal::Transport> transport)
    : transport_(std::move(transport)) {}

ProtocolExchanger::~ProtocolExchanger() = default;

Result<void> ProtocolExchanger::Prepare(std::chrono::milliseconds deadline) {
  return transport_->Prepare(Clock::now() + deadline);
}

Result<EndpointInfo> ProtocolExchanger::Exchange(const EndpointInfo& local,
                                                 std::chrono::milliseconds deadline) {
  return transport_->Exchange(local, Clock::now() + deadline);
}

Result<void> ProtocolExchanger::Barrier(std::string_view stage,
                                        std::chrono::milliseconds deadline) {
  return transport_->Barrier(stage, Clock::now() + deadline);
}

Result<std::string> ProtocolExchanger::BarrierWithNote(std::string_view stage,
                                                       std::string_view note,
                                                       std::chrono::milliseconds deadline) {
  return transport_->BarrierWithNote(stage, note, Clock::now() + deadline);
}

void ProtocolExchanger::Abort(std::string_view reason, std::chrono::milliseconds deadline) {
  transport_->Abort(reason, Clock::now() + deadline);
}

void ProtocolExchanger::Cancel(std::string_view reason) { transport_->Cancel(reason); }

Result<void> ProtocolExchanger::PollPeer() { return transport_->PollPeer(); }

std::optional<std::string> ProtocolExchanger::PeerStage() { return transport_->PeerStage(); }

ExchangeStats ProtocolExchanger::stats() const { return transport_->stats(); }

std::vector<Gid> ProtocolExchanger::Addresses() const { return transport_->Addresses(); }

}  // namespace qpconnect::oob
