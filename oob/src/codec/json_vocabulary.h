// SPDX-License-Identifier: MIT
// Private to the codec: the one JSON vocabulary of qpconnect's documents
// (docs/json.md), applied to Protobuf's JSON mapping of the wire messages (json_wire.h).
//
// Protobuf prints enums by their proto names and 64-bit integers as decimal
// strings ("TRANSPORT_RC", "MTU_4096", "node_guid": "724..."). Every other
// qpconnect document (qp-info, qp-validate, qp-connect --json) says "rc",
// 4096 and "0002:c903:00a1:b2c4". ToReadable rewrites a printed message into
// that vocabulary; FromReadable rewrites either vocabulary back into what
// Protobuf's parser takes, so older files keep decoding:
//
//   enum fields     "rc", "infiniband", "roce-v2", "ipv4" (the enum's name
//                   without its type prefix, lower case, '_' as '-');
//                   input also: the proto name, or its number
//   Mtu fields      256..4096 as a number; input also "MTU_4096", "4096",
//                   or the enum number 0..5
//   node_guid,      "0002:c903:00a1:b2c4" (as ibv_devinfo); input also the
//   subnet_prefix   decimal string or number Protobuf wrote
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "codec/json_wire.h"
#include "codec/schema.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

// `doc` (a `type` message in Protobuf's JSON mapping, json_wire.h) rewritten
// in place into the readable vocabulary.
void ToReadable(OrderedJson& doc, const schema::Message& type);

// `text` (already syntax-checked by CheckJson) parsed, with readable values
// turned into Protobuf's. kProtocol naming the field path ("port.active_mtu")
// and the accepted values for a value that is neither.
Result<OrderedJson> FromReadable(std::string_view text, const schema::Message& type);

}  // namespace qpconnect::oob::internal
