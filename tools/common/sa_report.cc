// SPDX-License-Identifier: MIT
#include "sa_report.h"

#include <cstdio>
#include <string>

#include "hex_text.h"

namespace qpconnect::tools {

nlohmann::json PathRecordToJson(const PathRecord& r) {
  return {{"service_id", Hex(r.service_id, 16)},
          {"dgid", GidToString(r.dgid)},
          {"sgid", GidToString(r.sgid)},
          {"dlid", r.dlid},
          {"slid", r.slid},
          {"raw_traffic", r.raw_traffic},
          {"flow_label", r.flow_label},
          {"hop_limit", r.hop_limit},
          {"traffic_class", r.traffic_class},
          {"reversible", r.reversible},
          {"numb_path", r.numb_path},
          {"pkey", Hex(r.pkey, 4)},
          {"qos_class", r.qos_class},
          {"sl", r.sl},
          {"mtu", MtuBytes(r.mtu)},
          {"mtu_code", static_cast<unsigned>(r.mtu)},
          {"mtu_selector", r.mtu_selector},
          {"rate", r.rate},
          {"rate_gbps", RateGbps(r.rate)},
          {"rate_selector", r.rate_selector},
          {"packet_lifetime", r.packet_lifetime},
          {"packet_lifetime_selector", r.packet_lifetime_selector},
          {"packet_lifetime_ns", IbTimeValue(r.packet_lifetime).count()},
          {"ack_timeout", AckTimeoutForPacketLifetime(r.packet_lifetime)},
          {"preference", r.preference}};
}

}  // namespace qpconnect::tools
