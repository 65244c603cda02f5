// The wire format's descriptors register on first need, not before main
// (oob/proto/lazy_descriptors.cmake): the binary codec never registers them,
// and the readable JSON form, which needs them, still works once they are.
//
// Its own executable: no other test may have used a descriptor first.
#include <gtest/gtest.h>

#include <google/protobuf/descriptor.h>

#include "codec_samples.h"
#include "qpconnect/oob/codec.h"

namespace qpconnect::oob {
namespace {

constexpr char kFile[] = "qpconnect/oob/v1/endpoint.proto";

bool Registered() {
  return google::protobuf::DescriptorPool::generated_pool()->FindFileByName(kFile) != nullptr;
}

TEST(LazyDescriptors, BinaryNeverRegistersThemAndJsonRegistersThemOnFirstUse) {
  EXPECT_FALSE(Registered()) << kFile << " was registered before main (eagerly)";

  const EndpointInfo sample = testing::SampleRc();
  auto binary = DecodeBinary(EncodeBinary(sample));
  ASSERT_TRUE(binary) << binary.error().ToString();
  EXPECT_EQ(binary->qps.at(0).qpn, sample.qps.at(0).qpn);
  EXPECT_FALSE(Registered()) << "the binary codec registered " << kFile;

  const std::string json = EncodeJson(sample);
  EXPECT_NE(json.find("\"qpn\""), std::string::npos) << json;
  auto back = DecodeJson(json);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->qps.at(0).qpn, sample.qps.at(0).qpn);
  EXPECT_EQ(back->identity.device, sample.identity.device);
  EXPECT_TRUE(Registered());
  EXPECT_NE(google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
                "qpconnect.oob.v1.Endpoint"),
            nullptr);

  // An error in the readable form is still located by its field (descriptors
  // walk the text): "line L, column C: ...".
  std::string bad = json;
  const size_t at = bad.find("\"qpn\"");
  ASSERT_NE(at, std::string::npos);
  bad.insert(bad.find(':', at) + 1, " \"x\",");
  auto refused = DecodeJson(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().detail.rfind("line ", 0), 0U) << refused.error().detail;
}

}  // namespace
}  // namespace qpconnect::oob
