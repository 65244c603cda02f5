// SPDX-License-Identifier: MIT
#include "cm_bases.h"

#include <cerrno>
#include <map>
#include <utility>

#include "id_part.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/verbs/describe.h"

namespace qpconnect::rdmacm {

Result<const WireBase*> BaseOf(const Id* id) {
  static std::map<const verbs::LocalDescription*, WireBase> bases;  // under library_mutex
  static uint32_t next = 1;
  if (id->described == nullptr)
    return Error(ErrorCode::kInvalidArgument, EINVAL, "describe", "", "the id is not described");
  if (auto it = bases.find(id->described); it != bases.end()) return &it->second;
  EndpointInfo base = id->described->endpoint;
  ApplyIdPart(base, IdPart{});  // a placeholder QP: each REQ/REP carries its own
  QPC_TRY(oob::CheckWireRanges(base));
  auto [pos, inserted] = bases.emplace(id->described, WireBase{next++, oob::EncodeBinary(base)});
  return &pos->second;
}

void PutBase(Message& msg, const Id* id, const WireBase& base, CmLink& link) {
  msg.base = base.number;
  msg.psn = id->psn & kPsnMask;
  msg.traffic_class = id->local.path.traffic_class;
  if (link.book.bases_sent.insert(base.number).second) msg.endpoint = base.bytes;
}

Result<EndpointInfo> PeerDescription(CmLink& link, const Message& msg,
                                     std::optional<Result<EndpointInfo>>* decoded) {
  auto& bases = link.book.peer_bases;
  if (decoded != nullptr && *decoded) {
    if (!**decoded) return std::move(**decoded).error();
    if (bases.size() >= CmLink::kMaxBases && bases.count(msg.base) == 0)
      return Error(
          ErrorCode::kProtocol, 0, "read description", "base",
          "more than " + std::to_string(CmLink::kMaxBases) + " description bases on one link");
    bases[msg.base] = std::move(***decoded);
  }
  auto it = bases.find(msg.base);
  if (it == bases.end())
    return Error(ErrorCode::kProtocol, 0, "read description", "base",
                 "base " + std::to_string(msg.base) + " was never sent on this link");
  auto part = IdPartOf(msg);
  if (!part) return std::move(part).error();
  EndpointInfo remote = it->second;
  ApplyIdPart(remote, *part);
  return remote;
}

}  // namespace qpconnect::rdmacm
