// SPDX-License-Identifier: MIT
#include "qpconnect/endpoint.h"

#include <arpa/inet.h>

namespace qpconnect {

std::string MacToString(const MacAddress& mac) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < mac.size(); ++i) {
    if (i != 0) s += ':';
    s += kHex[mac[i] >> 4];
    s += kHex[mac[i] & 0xf];
  }
  return s;
}

std::optional<MacAddress> MacFromString(const std::string& text) {
  if (text.size() != 17) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  MacAddress mac{};
  for (size_t i = 0; i < mac.size(); ++i) {
    const size_t at = i * 3;
    if (i != 0 && text[at - 1] != ':') return std::nullopt;
    const int hi = nibble(text[at]);
    const int lo = nibble(text[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    mac[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return mac;
}

int MtuBytes(Mtu mtu) {
  switch (mtu) {
    case Mtu::k256:
      return 256;
    case Mtu::k512:
      return 512;
    case Mtu::k1024:
      return 1024;
    case Mtu::k2048:
      return 2048;
    case Mtu::k4096:
      return 4096;
    case Mtu::kInvalid:
      break;
  }
  return 0;
}

Mtu MtuFromBytes(int bytes) {
  switch (bytes) {
    case 256:
      return Mtu::k256;
    case 512:
      return Mtu::k512;
    case 1024:
      return Mtu::k1024;
    case 2048:
      return Mtu::k2048;
    case 4096:
      return Mtu::k4096;
    default:
      return Mtu::kInvalid;
  }
}

bool IsValidMtu(Mtu mtu) { return MtuBytes(mtu) != 0; }

std::string GidToString(const Gid& gid) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, gid.data(), buf, sizeof buf) == nullptr) return "?";
  return buf;
}

std::optional<Gid> GidFromString(const std::string& text) {
  Gid gid{};
  if (inet_pton(AF_INET6, text.c_str(), gid.data()) != 1) return std::nullopt;
  return gid;
}

bool IsZeroGid(const Gid& gid) {
  for (uint8_t b : gid) {
    if (b != 0) return false;
  }
  return true;
}

bool IsLinkLocalGid(const Gid& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

bool IsIpv4MappedGid(const Gid& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid[static_cast<size_t>(i)] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

bool IsMulticastGid(const Gid& gid) { return gid[0] == 0xff; }

uint64_t GidSubnetPrefix(const Gid& gid) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | gid[i];
  return v;
}

GidFamily FamilyOfGid(const Gid& gid, GidType type) {
  if (type != GidType::kRoceV1 && type != GidType::kRoceV2) return GidFamily::kUnspecified;
  return IsIpv4MappedGid(gid) ? GidFamily::kIpv4 : GidFamily::kIpv6;
}

const char* TransportName(Transport t) {
  switch (t) {
    case Transport::kRc:
      return "rc";
    case Transport::kUc:
      return "uc";
    case Transport::kUd:
      return "ud";
  }
  return "unknown";
}

const char* LinkLayerName(LinkLayer l) {
  switch (l) {
    case LinkLayer::kInfiniBand:
      return "infiniband";
    case LinkLayer::kEthernet:
      return "ethernet";
    case LinkLayer::kUnspecified:
      break;
  }
  return "unspecified";
}

const char* GidTypeName(GidType t) {
  switch (t) {
    case GidType::kIb:
      return "ib";
    case GidType::kRoceV1:
      return "roce-v1";
    case GidType::kRoceV2:
      return "roce-v2";
    case GidType::kUnspecified:
      break;
  }
  return "unspecified";
}

const char* GidFamilyName(GidFamily f) {
  switch (f) {
    case GidFamily::kIpv4:
      return "ipv4";
    case GidFamily::kIpv6:
      return "ipv6";
    case GidFamily::kUnspecified:
      break;
  }
  return "unspecified";
}

const char* GidChoiceName(GidChoice c) {
  switch (c) {
    case GidChoice::kJoint:
      return "joint";
    case GidChoice::kPinned:
      return "pinned";
    case GidChoice::kOwn:
      break;
  }
  return "own";
}

}  // namespace qpconnect
