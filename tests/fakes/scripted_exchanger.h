// SPDX-License-Identifier: MIT
// ScriptedExchanger: the peer of a unit test's connector without a peer
// process. Exchange() hands out a prepared description (and keeps the one
// published), every barrier passes, and the aborts are recorded, so tests
// can assert that a failure after the exchange told the peer.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qpconnect/exchanger.h"

namespace qpconnect::testing {

// Hands out a prepared peer description, passes every barrier, and records
// the aborts.
class ScriptedExchanger : public Exchanger {
 public:
  explicit ScriptedExchanger(EndpointInfo peer) : peer_(std::move(peer)) {}
  Result<EndpointInfo> Exchange(const EndpointInfo& local,
                                std::chrono::milliseconds deadline) override {
    (void)deadline;
    published_ = local;
    return peer_;
  }
  Result<void> Barrier(std::string_view stage, std::chrono::milliseconds deadline) override {
    (void)deadline;
    barriers_.emplace_back(stage);
    return Ok();
  }
  void Abort(std::string_view reason, std::chrono::milliseconds deadline) override {
    (void)deadline;
    aborts_.emplace_back(reason);
  }
  const std::vector<std::string>& aborts() const { return aborts_; }
  const std::vector<std::string>& barriers() const { return barriers_; }
  const EndpointInfo& published() const { return published_; }  // the last Exchange()'s local

 private:
  EndpointInfo peer_;
  EndpointInfo published_;
  std::vector<std::string> aborts_;
  std::vector<std::string> barriers_;
};

}  // namespace qpconnect::testing
