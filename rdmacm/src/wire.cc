// SPDX-License-Identifier: MIT
#include "wire.h"

#include <cstring>

namespace qpconnect::rdmacm {
namespace {

// Body layout (all integers big-endian):
//   u8 type (2 to 8)
//   u32 dst, u32 src, u16 port_space, u8 qp_type,
//           u8 responder_resources, u8 initiator_depth, u8 flow_control,
//           u8 retry_count, u8 rnr_retry_count, u8 srq, u32 qp_num, u32 qkey,
//           u32 psn, u32 base, u16 reason, u8 traffic_class,
//           u32 ece vendor_id, u32 ece options (protocol 6), u8 family (0, 4 or 6),
//           u16 port, 16 bytes address,
//           u16 length + private data (<= 255), u16 length + text (<= 1024),
//           u32 length + endpoint (<= kMaxBody)
constexpr size_t kMaxPrivate = 255;
constexpr size_t kMaxText = 1024;

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    U8(static_cast<uint8_t>(v >> 8));
    U8(static_cast<uint8_t>(v));
  }
  void U32(uint32_t v) {
    U16(static_cast<uint16_t>(v >> 16));
    U16(static_cast<uint16_t>(v));
  }
  void Bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(uint8_t& v) {
    if (in_.size() < 1) return false;
    v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U16(uint16_t& v) {
    uint8_t a = 0, b = 0;
    if (!U8(a) || !U8(b)) return false;
    v = static_cast<uint16_t>(a << 8 | b);
    return true;
  }
  bool U32(uint32_t& v) {
    uint16_t a = 0, b = 0;
    if (in_.size() < 4 || !U16(a) || !U16(b)) return false;
    v = uint32_t{a} << 16 | b;
    return true;
  }
  bool Bytes(size_t n, std::string_view& out) {
    if (in_.size() < n) return false;
    out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  size_t left() const { return in_.size(); }

 private:
  std::string_view in_;
};

Error Malformed(MsgType type, const char* field, const std::string& why) {
  return Error(ErrorCode::kProtocol, 0, std::string("decode ") + MsgTypeName(type) + " message",
               field, why);
}

}  // namespace

const char* MsgTypeName(MsgType type) {
  switch (type) {
    case MsgType::kHello:
      return "HELLO";
    case MsgType::kReq:
      return "REQ";
    case MsgType::kRep:
      return "REP";
    case MsgType::kRej:
      return "REJ";
    case MsgType::kRtu:
      return "RTU";
    case MsgType::kDreq:
      return "DREQ";
    case MsgType::kDrep:
      return "DREP";
    case MsgType::kMra:
      return "MRA";
  }
  return "unknown";
}

std::string EncodeBody(const Message& m) {
  Writer w;
  w.U8(static_cast<uint8_t>(m.type));
  w.U32(m.dst);
  w.U32(m.src);
  w.U16(m.port_space);
  w.U8(m.qp_type);
  w.U8(m.params.responder_resources);
  w.U8(m.params.initiator_depth);
  w.U8(m.params.flow_control);
  w.U8(m.params.retry_count);
  w.U8(m.params.rnr_retry_count);
  w.U8(m.params.srq);
  w.U32(m.params.qp_num);
  w.U32(m.qkey);
  w.U32(m.psn);
  w.U32(m.base);
  w.U16(m.reason);
  w.U8(m.traffic_class);
  w.U32(m.ece.vendor_id);
  w.U32(m.ece.options);
  uint8_t addr[16] = {};
  uint16_t port = 0;
  uint8_t family = 0;
  if (m.src_addr.ss_family == AF_INET) {
    const auto& sin = reinterpret_cast<const sockaddr_in&>(m.src_addr);
    family = 4;
    port = ntohs(sin.sin_port);
    std::memcpy(addr, &sin.sin_addr, 4);
  } else if (m.src_addr.ss_family == AF_INET6) {
    const auto& sin6 = reinterpret_cast<const sockaddr_in6&>(m.src_addr);
    family = 6;
    port = ntohs(sin6.sin6_port);
    std::memcpy(addr, &sin6.sin6_addr, 16);
  }
  w.U8(family);
  w.U16(port);
  w.Bytes(addr, sizeof addr);
  size_t pd = std::min(m.private_data.size(), kMaxPrivate);
  w.U16(static_cast<uint16_t>(pd));
  w.Bytes(m.private_data.data(), pd);
  size_t tl = std::min(m.text.size(), kMaxText);
  w.U16(static_cast<uint16_t>(tl));
  w.Bytes(m.text.data(), tl);
  w.U32(static_cast<uint32_t>(m.endpoint.size()));
  w.Bytes(m.endpoint.data(), m.endpoint.size());
  return w.Take();
}

Result<Message> DecodeBody(std::string_view body) {
  Reader r(body);
  Message m;
  uint8_t type = 0;
  if (!r.U8(type) || type <= static_cast<uint8_t>(MsgType::kHello) ||
      type > static_cast<uint8_t>(MsgType::kMra))
    return Error(ErrorCode::kProtocol, 0, "decode message", "type",
                 "unknown message type " + std::to_string(type));
  m.type = static_cast<MsgType>(type);
  uint8_t family = 0;
  uint16_t port = 0, pd_len = 0, text_len = 0;
  uint32_t ep_len = 0;
  std::string_view addr, pd, text, ep;
  if (!r.U32(m.dst) || !r.U32(m.src) || !r.U16(m.port_space) || !r.U8(m.qp_type) ||
      !r.U8(m.params.responder_resources) || !r.U8(m.params.initiator_depth) ||
      !r.U8(m.params.flow_control) || !r.U8(m.params.retry_count) ||
      !r.U8(m.params.rnr_retry_count) || !r.U8(m.params.srq) || !r.U32(m.params.qp_num) ||
      !r.U32(m.qkey) || !r.U32(m.psn) || !r.U32(m.base) || !r.U16(m.reason) ||
      !r.U8(m.traffic_class) || !r.U32(m.ece.vendor_id) || !r.U32(m.ece.options) || !r.U8(family) ||
      !r.U16(port) || !r.Bytes(16, addr))
    return Malformed(m.type, "header", "truncated");
  if (!r.U16(pd_len) || pd_len > kMaxPrivate || !r.Bytes(pd_len, pd))
    return Malformed(m.type, "private_data",
                     "length " + std::to_string(pd_len) + " truncated or above 255");
  if (!r.U16(text_len) || text_len > kMaxText || !r.Bytes(text_len, text))
    return Malformed(m.type, "text",
                     "length " + std::to_string(text_len) + " truncated or above 1024");
  if (!r.U32(ep_len) || ep_len > kMaxBody || !r.Bytes(ep_len, ep))
    return Malformed(m.type, "endpoint", "length " + std::to_string(ep_len) + " truncated");
  if (r.left() != 0) return Malformed(m.type, "body", std::to_string(r.left()) + " trailing bytes");
  if (family == 4) {
    auto& sin = reinterpret_cast<sockaddr_in&>(m.src_addr);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    std::memcpy(&sin.sin_addr, addr.data(), 4);
  } else if (family == 6) {
    auto& sin6 = reinterpret_cast<sockaddr_in6&>(m.src_addr);
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    std::memcpy(&sin6.sin6_addr, addr.data(), 16);
  } else if (family != 0) {
    return Malformed(m.type, "src_addr", "family " + std::to_string(family));
  }
  m.private_data.assign(pd);
  m.text.assign(text);
  m.endpoint.assign(ep);
  return m;
}

}  // namespace qpconnect::rdmacm
