// SPDX-License-Identifier: MIT
#include "overdue.h"

#include <algorithm>

namespace qpconnect::rdmacm {

bool PeerStillTalking(std::chrono::steady_clock::time_point now,
                      std::chrono::steady_clock::time_point connect_started,
                      std::chrono::steady_clock::time_point last_heard,
                      std::chrono::milliseconds answer_timeout) {
  if (last_heard == std::chrono::steady_clock::time_point{}) return false;
  return now - last_heard < answer_timeout &&
         now - connect_started < std::max(answer_timeout, kMraBound);
}

}  // namespace qpconnect::rdmacm
