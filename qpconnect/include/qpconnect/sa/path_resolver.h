// SPDX-License-Identifier: MIT
// Asking the subnet administrator (SA) for a PathRecord, without librdmacm.
//
// Three layers, so the bytes are tested without a fabric:
//   - the codec: EncodePathQuery / DecodePathReply turn a PathQuery into a
//     256-byte SubnAdmGetTable(PathRecord) MAD and a reply back into a
//     PathRecord or a precise Error (MAD layout: IBA 1.3 vol. 1, 13.4.2 and
//     15.2.1; PathRecord: 15.2.5.16). Packed by hand, not with libibmad: see
//     docs/ib-paths.md.
//   - the seam: MadChannel, "send a MAD to the SA, receive a MAD", which the
//     umad implementation (qpconnect/sa/umad_channel.h) and the tests' scripted
//     fakes provide.
//   - ResolvePath: tries, deadline, TID matching, and the error vocabulary.
//
// Thread-safety: the functions are pure; a MadChannel is used by one thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/path_record.h"
#include "qpconnect/result.h"

namespace qpconnect::sa {

inline constexpr size_t kMadSize = 256;
inline constexpr uint16_t kAttrPathRecord = 0x0035;
inline constexpr uint8_t kMgmtClassSubnAdm = 0x03;
inline constexpr uint8_t kMethodGetTable = 0x12;
inline constexpr uint8_t kMethodGetTableResp = 0x92;

// The local port as the SA query needs it (read by umad_get_port, or filled by
// a test).
struct SaPort {
  std::string ca_name;  // "mlx5_0", or "ibsim0" under umad2sim
  uint8_t port_num = 0;
  uint16_t lid = 0;
  uint8_t lmc = 0;
  uint16_t sm_lid = 0;  // 0: no subnet manager has programmed this port
  uint8_t sm_sl = 0;
  uint8_t state = 0;  // IBA PortState: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE
  Gid gid{};          // GID index 0: subnet prefix + port GUID
  LinkLayer link_layer = LinkLayer::kUnspecified;
};

// Where the path goes and what it must carry.
struct PathQuery {
  std::optional<uint16_t> dlid;  // exactly one of dlid and dgid
  std::optional<Gid> dgid;
  std::optional<uint16_t> pkey;  // ask for this partition; unset: the SA picks
  std::optional<uint8_t> sl;     // ask for this SL; unset: the SA picks
};

// Encodes `query` from `port` as a SubnAdmGetTable(PathRecord) with
// transaction id `tid`, asking for one reversible path (NumbPath 1). A DLID
// query carries SLID and DLID; a DGID query carries SGID and DGID.
// REQUIRES: exactly one of query.dlid and query.dgid is set.
std::array<uint8_t, kMadSize> EncodePathQuery(const SaPort& port, const PathQuery& query,
                                              uint64_t tid);

// What a reply says, before the resolver decides what it means.
struct PathReply {
  uint64_t tid = 0;
  uint16_t status = 0;              // MAD status (host order); 0 = success
  std::vector<PathRecord> records;  // the records that fit in this MAD
};

// Decodes a reply MAD. kProtocol, naming the field at fault, if it is shorter
// than the SA header, is not a SubnAdm GetTableResp for PathRecord, or its
// attribute offset is not PathRecord's 8 words. A nonzero status is returned
// in PathReply::status, not as an error (the caller says what it means).
Result<PathReply> DecodePathReply(const uint8_t* mad, size_t length);

// Human text for an SA/MAD status ("no records (0x0300)", ...).
std::string MadStatusText(uint16_t status);

// The seam: one SA conversation.
class MadChannel {
 public:
  virtual ~MadChannel() = default;
  // Sends a 256-byte MAD to the SA (the port's SM LID, QP1).
  // kIo if it cannot be sent.
  virtual Result<void> Send(const std::array<uint8_t, kMadSize>& mad) = 0;
  // The next MAD that arrives within `timeout`, any TID. kTimeout if none;
  // kIo if receiving failed.
  virtual Result<std::vector<uint8_t>> Receive(std::chrono::milliseconds timeout) = 0;
};

struct ResolveOptions {
  std::chrono::milliseconds try_timeout{500};  // wait for one reply
  int tries = 4;                               // sends, each with a new TID
  std::chrono::milliseconds deadline{3000};    // bounds everything
  uint64_t first_tid = 0x51c0'0000'0001;       // tests fix it; tools vary it
};

// Asks the SA through `channel` for the path `query` from `port`.
// Errors (operation "SA PathRecord query", attribute says which):
//   kInvalidArgument  "dlid"/"dgid": neither or both destinations given
//   kIncompatible     "link_layer": an Ethernet (RoCE) port has no SA
//   kNotFound         "sm_lid": the port is not ACTIVE or no SM has
//                     programmed it (SM LID 0) - no subnet manager
//   kTimeout          "sa": no matching reply in `tries` tries or by `deadline`
//   kProtocol         the field of a malformed reply, or "status" for an
//                     error status other than no-records
//   kNotFound         "path": the SA has no path (no such destination, or it
//                     shares no partition with this port)
//   kIncompatible     "pkey": the SA has a path, but not in the P_Key asked
//                     for (the partition refuses it); the detail says which
//   kIo               the channel failed
// On kIncompatible "pkey" a second query without the P_Key was made to tell a
// partition refusal from a missing path.
Result<PathRecord> ResolvePath(MadChannel& channel, const SaPort& port, const PathQuery& query,
                               const ResolveOptions& options = {});

// Parses a destination: a LID (decimal, or 0x hex, 1..0xbfff) or a GID in
// IPv6 notation. kInvalidArgument naming `text` otherwise.
Result<PathQuery> ParseDestination(const std::string& text);

}  // namespace qpconnect::sa
