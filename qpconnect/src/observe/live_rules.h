// Private to the live judge: the rule enumeration, in the order of the live
// catalogue (live_catalogue.cc), and the metadata lookup.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qpconnect/validate.h"

namespace qpconnect::live_internal {

// One value per live catalogue entry, in catalogue order. Ids are public; the
// enumeration is not.
enum class LiveRule : uint8_t {
  kPeerQpGone,
  kQpErrorState,
  kQpNotConnected,
  kRqpnDangling,
  kPsnReceiverAhead,
  kPsnSenderAhead,
  kPsnStalled,
  kReceiverNotReady,
  kProcessStopped,

  kCount,
};

constexpr size_t kLiveRuleCount = static_cast<size_t>(LiveRule::kCount);

// Metadata of `rule` (live_catalogue.cc).
const RuleInfo& LiveMeta(LiveRule rule);

}  // namespace qpconnect::live_internal
