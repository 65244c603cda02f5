// SPDX-License-Identifier: MIT
// The frame format (frame.h) and the stdio line encoding (stdio.h).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/stdio.h"

namespace qpconnect::oob {
namespace {

std::string Header(uint8_t version, uint8_t type, uint8_t flags, uint8_t reserved, uint32_t len) {
  std::string h = {'\x89', 'Q', 'P', 'C'};
  h += static_cast<char>(version);
  h += static_cast<char>(type);
  h += static_cast<char>(flags);
  h += static_cast<char>(reserved);
  h += static_cast<char>(len >> 24);
  h += static_cast<char>((len >> 16) & 0xff);
  h += static_cast<char>((len >> 8) & 0xff);
  h += static_cast<char>(len & 0xff);
  return h;
}

TEST(Frame, HeaderLayoutMatchesTheDocumentedBytes) {
  EXPECT_EQ(EncodeFrameHeader(FrameType::kBarrier, kFrameFlagSealed, 0x01020304),
            Header(2, 3, 8, 0, 0x01020304));
  EXPECT_EQ(EncodeFrameHeader(FrameType::kConfirm, kFrameFlagMac | kFrameFlagBound, 36),
            Header(2, 5, 3, 0, 36));
}

TEST(Frame, TrailerSizeFollowsTheFlags) {
  FrameHeader h;
  EXPECT_EQ(h.TrailerBytes(), 0u);
  h.flags = kFrameFlagMac;
  EXPECT_EQ(h.TrailerBytes(), kFrameMacBytes);
  h.flags = kFrameFlagSealed | kFrameFlagBound;
  EXPECT_EQ(h.TrailerBytes(), kFrameTagBytes);
  auto both = DecodeFrameHeader(Header(2, 2, kFrameFlagMac | kFrameFlagSealed, 0, 0), 1024);
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().attribute, "flags");
  auto roles =
      DecodeFrameHeader(Header(2, 1, kFrameFlagRoleClient | kFrameFlagRoleServer, 0, 16), 1024);
  ASSERT_FALSE(roles);
  EXPECT_NE(roles.error().detail.find("both roles"), std::string::npos);
  EXPECT_EQ(RoleOfFlags(RoleFlags(OobRole::kClient)), OobRole::kClient);
  EXPECT_EQ(RoleOfFlags(RoleFlags(OobRole::kServer)), OobRole::kServer);
  EXPECT_EQ(RoleOfFlags(0), OobRole::kNone);
}

TEST(Frame, PeekTellsNotThereYetFromNotAFrame) {
  const std::string whole = Header(2, 2, 0, 0, 4) + "abcd";
  for (size_t n = 0; n < kFrameHeaderBytes; ++n) {
    auto r = PeekFrameSize(whole.substr(0, n), 1024);
    ASSERT_TRUE(r) << n << ": " << r.error().ToString();
    EXPECT_EQ(*r, 0u);
  }
  auto size = PeekFrameSize(whole.substr(0, 13), 1024);
  ASSERT_TRUE(size);
  EXPECT_EQ(*size, whole.size());
  auto garbage = PeekFrameSize("GET", 1024);  // refused from its first byte
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().attribute, "magic");
}

TEST(Frame, RoundTripsPayloadAndMac) {
  Frame f;
  f.type = FrameType::kEndpoint;
  f.flags = kFrameFlagMac | kFrameFlagBound;
  f.payload = std::string("\0payload\xff", 9);
  f.mac = std::string(kFrameMacBytes, 'm');
  const std::string bytes = EncodeFrame(f);
  ASSERT_EQ(bytes.size(), kFrameHeaderBytes + 9 + kFrameMacBytes);
  auto back = DecodeFrame(bytes, 1024);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->type, f.type);
  EXPECT_EQ(back->flags, f.flags);
  EXPECT_EQ(back->payload, f.payload);
  EXPECT_EQ(back->mac, f.mac);
}

TEST(Frame, RefusesWrongMagicAndNamesAPingpongPeer) {
  auto r = DecodeFrameHeader("001a:0004b2:", 1024);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(r.error().attribute, "magic");
  EXPECT_NE(r.error().detail.find("pingpong"), std::string::npos) << r.error().detail;
}

TEST(Frame, RefusesAnotherVersionAsIncompatibleNamingBoth) {
  // A peer of the previous version (1, before key confirmation and
  // encryption) is refused, never misread; and so is a newer one.
  auto old = DecodeFrameHeader(Header(1, 2, 0, 0, 10), 1024);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(old.error().attribute, "version");
  EXPECT_NE(old.error().detail.find("frame version 1; this build speaks version 2"),
            std::string::npos)
      << old.error().detail;
  EXPECT_NE(old.error().detail.find("older"), std::string::npos);
  auto newer = DecodeFrameHeader(Header(3, 2, 0, 0, 10), 1024);
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(newer.error().detail.find("version 3"), std::string::npos);
}

TEST(Frame, RefusesOversizedLengthFromTheHeaderAlone) {
  // Only the 12 header bytes exist: the cap is checked before anything else.
  auto r = DecodeFrame(Header(2, 2, 0, 0, 0xffffffff), kDefaultMaxPayloadBytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(r.error().attribute, "length");
  EXPECT_NE(r.error().detail.find("oversized"), std::string::npos);
  EXPECT_TRUE(DecodeFrameHeader(Header(2, 2, 0, 0, 1024), 1024));
  EXPECT_FALSE(DecodeFrameHeader(Header(2, 2, 0, 0, 1025), 1024));
}

TEST(Frame, RefusesTruncatedAndTrailingBytes) {
  std::string bytes = Header(2, 2, 0, 0, 10) + "12345";
  auto r = DecodeFrame(bytes, 1024);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_NE(r.error().detail.find("truncated"), std::string::npos);
  auto mac_missing = DecodeFrame(Header(2, 2, kFrameFlagMac, 0, 2) + "ab", 1024);
  ASSERT_FALSE(mac_missing);
  EXPECT_NE(mac_missing.error().detail.find("truncated"), std::string::npos);
  auto trailing = DecodeFrame(Header(2, 2, 0, 0, 2) + "abc", 1024);
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().detail.find("after the frame"), std::string::npos);
  auto short_header = DecodeFrame(std::string("\x89QP", 3), 1024);
  ASSERT_FALSE(short_header);
  EXPECT_NE(short_header.error().detail.find("truncated"), std::string::npos);
}

TEST(Frame, RefusesUnknownTypeFlagsAndReserved) {
  auto type = DecodeFrameHeader(Header(2, 9, 0, 0, 0), 1024);
  ASSERT_FALSE(type);
  EXPECT_EQ(type.error().attribute, "type");
  auto zero_type = DecodeFrameHeader(Header(2, 0, 0, 0, 0), 1024);
  ASSERT_FALSE(zero_type);
  auto flags = DecodeFrameHeader(Header(2, 2, 0x80, 0, 0), 1024);
  ASSERT_FALSE(flags);
  EXPECT_EQ(flags.error().attribute, "flags");
  auto reserved = DecodeFrameHeader(Header(2, 2, 0, 1, 0), 1024);
  ASSERT_FALSE(reserved);
  EXPECT_EQ(reserved.error().attribute, "reserved");
}

TEST(Frame, SurvivesRandomBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(rng() % 64, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    if (i % 2 == 0 && bytes.size() >= 5) {  // get past the magic and version half the time
      bytes.replace(0, 5, Header(kFrameVersion, 0, 0, 0, 0).substr(0, 5));
    }
    auto r = DecodeFrame(bytes, 48);
    if (r) {
      EXPECT_LE(r->payload.size(), 48u);
    }
  }
}

TEST(StdioLine, EncodesOneBase64UrlLine) {
  const std::string frame = std::string("\x89QPC\x01\x02\x00\x00\x00\x00\x00\x01\xfb", 13);
  const std::string line = EncodeStdioLine(frame);
  EXPECT_EQ(line.substr(0, 5), "qpc1:");
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find_first_not_of(
                "qpc1:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_\n"),
            std::string::npos);
  auto back = DecodeStdioLine(line);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, frame);
}

TEST(StdioLine, Base64UrlMatchesRfc4648Vectors) {
  EXPECT_EQ(EncodeStdioLine(""), "qpc1:\n");
  EXPECT_EQ(EncodeStdioLine("f"), "qpc1:Zg\n");
  EXPECT_EQ(EncodeStdioLine("fo"), "qpc1:Zm8\n");
  EXPECT_EQ(EncodeStdioLine("foo"), "qpc1:Zm9v\n");
  EXPECT_EQ(EncodeStdioLine("foobar"), "qpc1:Zm9vYmFy\n");
  EXPECT_EQ(EncodeStdioLine("\xfb\xff"), "qpc1:-_8\n");
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xfb\xff\xfe"}) {
    auto back = DecodeStdioLine(EncodeStdioLine(s));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, s);
  }
}

TEST(StdioLine, ToleratesSurroundingWhitespaceAndPadding) {
  auto r = DecodeStdioLine("  \tqpc1:Zm9vYg==\r\n");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(*r, "foob");
}

TEST(StdioLine, RefusesGarbageWithItsColumn) {
  auto r = DecodeStdioLine("qpc1:Zm9v!mFy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_NE(r.error().detail.find("column 10"), std::string::npos) << r.error().detail;
  auto impossible = DecodeStdioLine("qpc1:Zm9vY");
  ASSERT_FALSE(impossible);
  EXPECT_EQ(impossible.error().code, ErrorCode::kProtocol);
  auto no_prefix = DecodeStdioLine("hello world");
  ASSERT_FALSE(no_prefix);
  EXPECT_EQ(no_prefix.error().code, ErrorCode::kProtocol);
}

TEST(StdioLine, RefusesAnotherLineVersionAsIncompatible) {
  auto r = DecodeStdioLine("qpc2:Zm9v");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(r.error().detail.find("qpc2"), std::string::npos);
}

}  // namespace
}  // namespace qpconnect::oob
