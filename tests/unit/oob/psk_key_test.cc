// PSK loading, HMAC-SHA256 and nonces (psk.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "qpconnect/oob/psk.h"

namespace qpconnect::oob {
namespace {

class PskFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qpc-psk-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  std::string dir_;
};

std::string Hex(const Mac& m) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : m) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

TEST_F(PskFile, LoadsAnOwnerOnlyKeyWithoutItsTrailingNewline) {
  auto psk = LoadPsk(Write("key", "s3cret key\r\n", 0600));
  ASSERT_TRUE(psk) << psk.error().ToString();
  EXPECT_EQ(std::string(psk->bytes().begin(), psk->bytes().end()), "s3cret key");
  EXPECT_TRUE(LoadPsk(Write("ro", "k", 0400)));
}

TEST_F(PskFile, RefusesGroupOrWorldReadableFiles) {
  for (mode_t mode : {0644u, 0640u, 0604u, 0620u, 0660u}) {
    auto psk = LoadPsk(Write("key", "secret", mode));
    ASSERT_FALSE(psk) << std::oct << mode;
    EXPECT_EQ(psk.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(psk.error().detail.find("chmod 600"), std::string::npos) << psk.error().detail;
  }
}

TEST_F(PskFile, RefusesEmptyAndWhitespaceOnlyKeys) {
  for (const char* content : {"", "\n", " \t\r\n"}) {
    auto psk = LoadPsk(Write("key", content, 0600));
    ASSERT_FALSE(psk);
    EXPECT_EQ(psk.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(psk.error().detail.find("empty"), std::string::npos);
  }
  EXPECT_FALSE(Psk::FromBytes(""));
}

TEST_F(PskFile, RefusesMissingFilesDirectoriesAndHugeFiles) {
  auto missing = LoadPsk(dir_ + "/nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  ::chmod(dir_.c_str(), 0700);
  auto directory = LoadPsk(dir_);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code, ErrorCode::kInvalidArgument);
  auto huge = LoadPsk(Write("big", std::string(kMaxPskFileBytes + 1, 'k'), 0600));
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, ErrorCode::kInvalidArgument);
}

// RFC 4231 test cases 1 and 2.
TEST(Hmac, MatchesRfc4231Vectors) {
  auto key1 = Psk::FromBytes(std::string(20, '\x0b'));
  ASSERT_TRUE(key1);
  auto mac1 = HmacSha256(*key1, {"Hi ", "There"});
  ASSERT_TRUE(mac1);
  EXPECT_EQ(Hex(*mac1), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  auto key2 = Psk::FromBytes("Jefe");
  ASSERT_TRUE(key2);
  auto mac2 = HmacSha256(*key2, {"what do ya want ", "", "for nothing?"});
  ASSERT_TRUE(mac2);
  EXPECT_EQ(Hex(*mac2), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Hmac, MacEqualComparesWholeValues) {
  EXPECT_TRUE(MacEqual("abc", "abc"));
  EXPECT_FALSE(MacEqual("abc", "abd"));
  EXPECT_FALSE(MacEqual("abc", "ab"));
  EXPECT_TRUE(MacEqual("", ""));
}

TEST(Nonce, IsFreshEachTime) {
  auto a = RandomNonce();
  auto b = RandomNonce();
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
}

TEST(Psk, CopiesAndMovesKeepTheKey) {
  auto psk = Psk::FromBytes("k1");
  ASSERT_TRUE(psk);
  Psk copy = *psk;
  Psk moved = std::move(*psk);
  EXPECT_EQ(copy.bytes(), moved.bytes());
  copy = moved;
  EXPECT_EQ(copy.bytes().size(), 2u);
}

}  // namespace
}  // namespace qpconnect::oob
