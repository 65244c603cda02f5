// SPDX-License-Identifier: MIT
// The library's connection-manager messages on the out-of-band TCP link, in
// place of the IB CM's MADs: REQ, REP, REJ, RTU, DREQ, DREP, MRA, with the
// same roles as the IB CM's (docs/rdmacm.md has the sequences). A REQ and a
// REP carry the sender's endpoint description (oob/codec.h's binary form),
// its connection parameters and the program's private data, so that each
// side validates the pair before any modify.
//
// This is the body codec only: each body travels as one message of the
// link's oob message stream (qpconnect/oob/stream_session.h: frame, hello,
// version check, keys and sealing), whose hello takes the place of a HELLO
// message. Decode() treats the body as hostile: every length is checked
// against what is left before it is used.
//
// Thread-safety: pure functions.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "qpconnect/result.h"
#include "state.h"

namespace qpconnect::rdmacm {

// The body's layout is part of the protocol's version
// (qpconnect/rdmacm/protocol_version.h). A body is at most kMaxBody bytes,
// and so is the endpoint description it carries.
inline constexpr uint32_t kMaxBody = 1u << 20;

enum class MsgType : uint8_t {
  // Not a message: the stream session's hello took its place (never encoded
  // or decoded).
  kHello = 1,
  kReq = 2,   // active -> passive: connect (RC) or SIDR request (UD)
  kRep = 3,   // passive -> active: accept
  kRej = 4,   // either way: reject (program or validator)
  kRtu = 5,   // active -> passive: ready to use (RC)
  kDreq = 6,  // either way: disconnect
  kDrep = 7,  // reply to a DREQ
  // passive -> active, dst 0: requests from this link reached a live program
  // that has not answered them yet (the IB CM's MRA, one per link); sent
  // while it waits, it keeps the active side from giving up on a slow accept
  // (cm.cc).
  kMra = 8,
};
const char* MsgTypeName(MsgType type);

struct Message {
  MsgType type = MsgType::kHello;
  uint16_t hello_flags = 0;  // HELLO: kHelloFlag*
  std::string nonce;         // HELLO: kNonceBytes fresh random bytes
  uint32_t dst = 0;          // the receiver's handle (all but HELLO and REQ)
  uint32_t src = 0;          // the sender's handle (REQ, REP)
  uint16_t port_space = 0;
  uint8_t qp_type = 0;  // enum ibv_qp_type
  ConnParams params;
  uint32_t qkey = 0;  // UD: the sender QP's Q_Key
  uint32_t psn = 0;   // REQ, REP: the sender QP's send PSN (24-bit)
  // REQ, REP: the sender's number for its description's base (the part ids
  // on one device port share); `endpoint` holds the base's bytes the first
  // time a link carries that number, and is empty after.
  uint32_t base = 0;
  uint16_t reason = 0;  // REJ: the status the receiver's REJECTED event gets
  // REQ, REP: the traffic class the sender's QP applies (the TOS the active
  // program set with rdma_set_option, or 0); the passive side applies the
  // REQ's, as rdma_cm's passive QP takes the request's path.
  uint8_t traffic_class = 0;
  // REQ, REP (RC): the sender's ECE (ece.h: a REQ the active side's, a REP
  // the request's vendor with the passive side's options); zero for none.
  Ece ece;
  // REQ: the active side's address as its program sees it (family, port and
  // address; AF_INET or AF_INET6).
  sockaddr_storage src_addr{};
  std::string private_data;
  std::string endpoint;  // oob::EncodeBinary bytes of a base (REQ, REP), or empty
  std::string text;      // REJ: why, for the receiver's log
};

// The body of `msg` (REQUIRES: not kHello): the bytes of one stream message.
std::string EncodeBody(const Message& msg);
// The message a body holds. kProtocol naming the field that is malformed,
// truncated or out of range (attribute "type" for kHello or an unknown type).
Result<Message> DecodeBody(std::string_view body);

}  // namespace qpconnect::rdmacm
