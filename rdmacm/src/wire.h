// The library's connection-manager messages on the out-of-band TCP link, in
// place of the IB CM's MADs: HELLO (each side, first), REQ, REP, REJ, RTU,
// DREQ, DREP, with the same roles as the IB CM's (docs/rdmacm.md has the
// sequences). A REQ and a REP carry the sender's endpoint description
// (oob/codec.h's binary form), its connection parameters and the program's
// private data, so that each side validates the pair before any modify.
//
// On the stream every message is a frame: a 4-byte big-endian body length
// (at most kMaxBody), then the body. HELLO carries a fresh nonce and whether
// the sender holds a pre-shared key; with one (QPCM_PSK_FILE on both sides)
// every later body travels sealed (link.cc: AES-256-GCM under per-direction
// keys derived from the key and both nonces, the sequence number as IV). Decode() treats the body
// as hostile: every length is checked against what is left before it is used.
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

// 2: MRA (type 8) and, without a key, requests right behind the HELLO; a
// version-1 peer would drop the link at its first MRA, so the HELLO refuses
// the pairing instead, naming both versions. 3: a REQ/REP carries its QP's
// PSN and names its description's base, sent once per link (id_part.h).
inline constexpr uint16_t kWireVersion = 3;
inline constexpr uint32_t kMaxBody = 1u << 20;
inline constexpr char kHelloMagic[4] = {'Q', 'P', 'C', 'M'};

enum class MsgType : uint8_t {
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

inline constexpr size_t kNonceBytes = 16;
inline constexpr uint16_t kHelloFlagPsk = 0x0001;  // the sender holds a pre-shared key

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
  // REQ: the active side's address as its program sees it (family, port and
  // address; AF_INET or AF_INET6).
  sockaddr_storage src_addr{};
  std::string private_data;
  std::string endpoint;  // oob::EncodeBinary bytes of a base (REQ, REP), or empty
  std::string text;      // REJ: why, for the receiver's log
};

// The body of `msg`, and the frame: length prefix and body.
std::string EncodeBody(const Message& msg);
std::string EncodeFrame(const Message& msg);
// The 4-byte big-endian length prefix of a body of `length` bytes.
std::string FramePrefix(size_t length);
// The body of one frame (without the length). kProtocol naming the field that
// is malformed, truncated or out of range.
Result<Message> DecodeBody(std::string_view body);

}  // namespace qpconnect::rdmacm
