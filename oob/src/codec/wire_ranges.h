// SPDX-License-Identifier: MIT
// Private to the codec: the range rules of the wire format and the wording of
// their errors, shared by CheckWireRanges (encode side and after decoding) and
// by the Protobuf conversion (which must refuse values too wide for the core
// types before narrowing them).
//
// Field names are paths into the message as docs/wire-format.md spells them
// ("qps[3].psn", "path.sgid.gid_text"), prefixed for nested messages
// ("remote.", "local.plan."). Errors carry the path in Error::attribute and a
// sentence starting with it in Error::detail; the caller sets the operation.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

constexpr size_t kMaxGidTableEntries = 4096;
constexpr size_t kMaxHostBytes = 255;    // a DNS name
constexpr size_t kMaxDeviceBytes = 64;   // IBV_SYSFS_NAME_MAX
constexpr size_t kMaxNetdevBytes = 128;  // ALTIFNAMSIZ
constexpr size_t kMaxNetdevs = 64;       // Endpoint.netdevs entries
constexpr uint32_t kMaxVlanId = 4094;    // 802.1Q (4095 reserved)
constexpr size_t kMaxGidTextBytes = 45;  // INET6_ADDRSTRLEN - 1
constexpr uint32_t kMaxSl = 15;
constexpr uint32_t kMaxLmc = 7;
constexpr uint32_t kMaxSrcPathBits = 127;
constexpr uint32_t kMaxFlowLabel = 0xfffff;
// QP attribute fields of the IB spec's width (ibv_modify_qp(3)).
constexpr uint32_t kMaxRnrTimer = 31;  // 5 bits
constexpr uint32_t kMaxTimeout = 31;   // 5 bits
constexpr uint32_t kMaxRetry = 7;      // 3 bits: retry_cnt, rnr_retry

// "0x1000000".
std::string Hex(uint64_t v);

// kProtocol error about `field`: attribute = field, detail = field + " " + what.
Error FieldError(std::string field, std::string_view what);

// Range errors, worded once.
Error ExceedsBitsError(std::string field, uint64_t value, int bits);  // hex value
Error OutOfRangeError(std::string field, int64_t value, int64_t lo, int64_t hi);
// `what` names the enum ("MTU"), `valid` lists its values ("0..5").
Error BadEnumError(std::string field, int64_t value, std::string_view what, std::string_view valid);
Error TooManyError(std::string field, size_t count, size_t cap);

// Enum checks (value is the raw integer, from the core enum or the message).
Result<void> CheckTransport(int64_t v, const std::string& field);
Result<void> CheckLinkLayer(int64_t v, const std::string& field);
Result<void> CheckMtu(int64_t v, const std::string& field);
Result<void> CheckGidType(int64_t v, const std::string& field);
Result<void> CheckGidChoice(int64_t v, const std::string& field);
Result<void> CheckGidFamily(int64_t v, const std::string& field);

// Checks a diagnostic string: at most `cap` bytes, valid UTF-8, no control
// characters (a peer's host name ends up on a terminal).
Result<void> CheckText(std::string_view text, size_t cap, const std::string& field);

// Every range rule of an endpoint / a plan; field paths start with `prefix`.
Result<void> CheckEndpointRanges(const EndpointInfo& info, const std::string& prefix);
Result<void> CheckPlanRanges(const ConnectionPlan& plan, const std::string& prefix);

}  // namespace qpconnect::oob::internal
