// SPDX-License-Identifier: MIT
// PSK loading and generation, and the primitives the exchangers compose with
// it: HMAC-SHA256, HKDF-SHA256, AES-256-GCM, nonces (psk.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "qpconnect/log.h"
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

template <typename Bytes>
std::string Hex(const Bytes& m) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (auto c : m) {
    const auto b = static_cast<uint8_t>(c);
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

TEST_F(PskFile, LoadsAnOwnerOnlyKeyWithoutItsTrailingNewline) {
  auto psk = LoadPsk(Write("key", "a s3cret key of 24 bytes\r\n", 0600));
  ASSERT_TRUE(psk) << psk.error().ToString();
  EXPECT_EQ(std::string(psk->bytes().begin(), psk->bytes().end()), "a s3cret key of 24 bytes");
  EXPECT_TRUE(LoadPsk(Write("ro", std::string(16, 'k'), 0400)));
}

TEST_F(PskFile, RefusesKeysShorterThanSixteenBytes) {
  auto psk = LoadPsk(Write("short", "fifteen bytes!!\n", 0600));
  ASSERT_FALSE(psk);
  EXPECT_EQ(psk.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(psk.error().detail.find("15 bytes long"), std::string::npos) << psk.error().detail;
  EXPECT_NE(psk.error().detail.find("--gen-psk"), std::string::npos);
  EXPECT_TRUE(LoadPsk(Write("ok", "sixteen bytes!!!\n", 0600)));
}

TEST(Psk, ShortKeysFromBytesAreAcceptedWithAWarning) {
  std::vector<std::string> logged;
  auto previous = SetLogHandler([&](LogLevel, std::string_view m) { logged.emplace_back(m); },
                                LogLevel::kWarning);
  EXPECT_TRUE(Psk::FromBytes("short"));
  EXPECT_TRUE(Psk::FromBytes(std::string(32, 'k')));
  SetLogHandler(previous);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("5 bytes long"), std::string::npos) << logged[0];
}

TEST_F(PskFile, GeneratedKeyIs32RandomBytesInHexModeOwnerOnlyAndNeverOverwritten) {
  const std::string path = dir_ + "/gen.key";
  ASSERT_TRUE(GeneratePskFile(path));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(text.size(), 2 * kGeneratedPskBytes + 1);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), 2 * kGeneratedPskBytes);
  auto key = LoadPsk(path);
  ASSERT_TRUE(key) << key.error().ToString();
  EXPECT_EQ(key->bytes().size(), 2 * kGeneratedPskBytes);

  auto again = GeneratePskFile(path);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().detail.find("refusing to overwrite"), std::string::npos);
  std::ifstream still(path);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(still)), std::istreambuf_iterator<char>()),
            text);

  const std::string other = dir_ + "/other.key";
  ASSERT_TRUE(GeneratePskFile(other));
  auto key2 = LoadPsk(other);
  ASSERT_TRUE(key2);
  EXPECT_NE(key->bytes(), key2->bytes());
  auto missing_dir = GeneratePskFile(dir_ + "/no/such/dir.key");
  ASSERT_FALSE(missing_dir);
  EXPECT_EQ(missing_dir.error().code, ErrorCode::kNotFound);
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
  auto mac2 = HmacSha256(std::string_view("Jefe"), {"what do ya want ", "", "for nothing?"});
  ASSERT_TRUE(mac2);
  EXPECT_EQ(Hex(*mac2), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

// RFC 5869 test case 1 (SHA-256), the first 32 bytes of its OKM.
TEST(Hkdf, MatchesRfc5869Vector) {
  const std::string ikm(22, '\x0b');
  const std::string salt("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 13);
  const std::string info("\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9", 10);
  auto okm = HkdfSha256(ikm, salt, info);
  ASSERT_TRUE(okm) << okm.error().ToString();
  EXPECT_EQ(Hex(*okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf");
}

// The GCM specification's test cases 13 and 14 (AES-256, zero key and IV).
TEST(Aead, MatchesGcmVectorsAndRefusesAnyChange) {
  const SecretKey key{};
  const AeadIv iv{};
  auto empty = AeadSeal(key, iv, "", "");
  ASSERT_TRUE(empty);
  EXPECT_EQ(Hex(*empty), "530f8afbc74536b9a963b4f1c4cb738b");
  auto sealed = AeadSeal(key, iv, "", std::string(16, '\0'));
  ASSERT_TRUE(sealed);
  EXPECT_EQ(Hex(*sealed),
            "cea7403d4d606b6e074ec5d3baf39d18"
            "d0d1c8a799996bf0265b98b5d48ab919");
  auto opened = AeadOpen(key, iv, "", *sealed);
  ASSERT_TRUE(opened);
  EXPECT_EQ(*opened, std::string(16, '\0'));

  auto with_aad = AeadSeal(key, iv, "header", "description");
  ASSERT_TRUE(with_aad);
  EXPECT_TRUE(AeadOpen(key, iv, "header", *with_aad));
  EXPECT_FALSE(AeadOpen(key, iv, "Header", *with_aad));  // additional data changed
  AeadIv other_iv{};
  other_iv[11] = 1;
  EXPECT_FALSE(AeadOpen(key, other_iv, "header", *with_aad));
  SecretKey other_key{};
  other_key[0] = 1;
  EXPECT_FALSE(AeadOpen(other_key, iv, "header", *with_aad));
  for (size_t i = 0; i < with_aad->size(); ++i) {
    std::string bad = *with_aad;
    bad[i] ^= 0x40;
    auto r = AeadOpen(key, iv, "header", bad);
    ASSERT_FALSE(r) << "byte " << i;
    EXPECT_EQ(r.error().code, ErrorCode::kAuth);
  }
  EXPECT_FALSE(AeadOpen(key, iv, "header", with_aad->substr(0, 10)));
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
  auto psk = Psk::FromBytes("k1 of sixteen bytes");
  ASSERT_TRUE(psk);
  Psk copy = *psk;
  Psk moved = std::move(*psk);
  EXPECT_EQ(copy.bytes(), moved.bytes());
  copy = moved;
  EXPECT_EQ(copy.bytes().size(), 19u);
}

}  // namespace
}  // namespace qpconnect::oob
