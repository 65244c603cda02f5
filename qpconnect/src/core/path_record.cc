// SPDX-License-Identifier: MIT
#include "qpconnect/path_record.h"

#include <algorithm>

namespace qpconnect {

double RateGbps(uint8_t rate) {
  switch (rate) {
    case 2:
      return 2.5;
    case 3:
      return 10;
    case 4:
      return 30;
    case 5:
      return 5;
    case 6:
      return 20;
    case 7:
      return 40;
    case 8:
      return 60;
    case 9:
      return 80;
    case 10:
      return 120;
    case 11:
      return 14;
    case 12:
      return 56;
    case 13:
      return 112;
    case 14:
      return 168;
    case 15:
      return 25;
    case 16:
      return 100;
    case 17:
      return 200;
    case 18:
      return 300;
    case 19:
      return 28;
    case 20:
      return 50;
    case 21:
      return 400;
    case 22:
      return 600;
    default:
      return 0;
  }
}

std::chrono::nanoseconds IbTimeValue(uint8_t value) {
  const unsigned v = std::min<unsigned>(value, 31);
  // 4096 ns * 2^v; 2^31 * 4096 ns fits in int64.
  return std::chrono::nanoseconds(int64_t{4096} << v);
}

uint8_t AckTimeoutForPacketLifetime(uint8_t packet_lifetime) {
  return static_cast<uint8_t>(std::min<unsigned>(unsigned{packet_lifetime} + 1, 31));
}

}  // namespace qpconnect
