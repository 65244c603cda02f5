// SPDX-License-Identifier: MIT
// libFuzzer target for the codec's decoders (docs/wire-format.md, "Fuzzing").
//
// Every input goes to DecodeBinary, DecodeJson and DecodeDumpJson. Beyond
// "no crash, no sanitizer report", whatever decodes must be in range and must
// survive a re-encode/decode round trip unchanged; a violation aborts, which
// libFuzzer reports with the input.
#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "qpconnect/oob/codec.h"

namespace qpconnect::oob {
namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "codec_fuzzer: %s\n", what);
  std::abort();
}

void CheckEndpoint(const EndpointInfo& info) {
  if (!CheckWireRanges(info)) Fail("decoded endpoint fails CheckWireRanges");
  Result<EndpointInfo> binary = DecodeBinary(EncodeBinary(info));
  if (!binary || !(*binary == info)) Fail("binary round trip changed the endpoint");
  Result<EndpointInfo> json = DecodeJson(EncodeJson(info));
  if (!json || !(*json == info)) Fail("JSON round trip changed the endpoint");
}

void CheckDump(const Dump& dump) {
  CheckEndpoint(dump.local.endpoint);
  if (dump.remote) CheckEndpoint(*dump.remote);
  Result<Dump> again = DecodeDumpJson(EncodeDumpJson(dump));
  if (!again || !(again->local.endpoint == dump.local.endpoint) ||
      !(again->local.plan == dump.local.plan) || !(again->remote == dump.remote)) {
    Fail("dump round trip changed the dump");
  }
}

}  // namespace
}  // namespace qpconnect::oob

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Protobuf logs invalid UTF-8 in strings before failing the parse; at
  // thousands of inputs a second that drowns the fuzzer's own output.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qpconnect::oob;  // NOLINT(google-build-using-namespace)
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto r = DecodeBinary(input)) CheckEndpoint(*r);
  if (auto r = DecodeJson(input)) CheckEndpoint(*r);
  if (auto r = DecodeDumpJson(input)) CheckDump(*r);
  return 0;
}
