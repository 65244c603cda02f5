// SPDX-License-Identifier: MIT
// libqpcm's log (rdmacm/src/log.h): a failure keyed `once_per` is said once
// per key and process, every call still failing (issue 39 item 3: libfabric's
// verbs provider probes every interface address with rdma_bind_addr, and an
// address no device serves is one quiet line, not an error per probe).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "log.h"

namespace qpconnect::rdmacm {
namespace {

// How many lines of `text` contain `part`.
int Lines(const std::string& text, const std::string& part) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(part) != std::string::npos;
  return n;
}

TEST(Fail, AKeyedFailureIsSaidOncePerKeyAndEveryCallFails) {
  // QPCM_LOG is read at the first line: set before anything here logs.
  char path[] = "/tmp/qpcm_log_test.XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_EQ(setenv("QPCM_LOG", path, 1), 0);
  for (int i = 0; i < 3; ++i) {
    errno = 0;
    EXPECT_EQ(Fail(ENODEV, "bind probe fe80::1%mgmt0", "rdma_bind_addr fe80::1%mgmt0"), -1);
    EXPECT_EQ(errno, ENODEV);
    errno = 0;
    EXPECT_EQ(Fail(ENODEV, "bind probe fe80::2%mgmt1", "rdma_bind_addr fe80::2%mgmt1"), -1);
    EXPECT_EQ(errno, ENODEV);
    errno = 0;
    EXPECT_EQ(Fail(EINVAL, "an unkeyed failure"), -1);  // said every time
    EXPECT_EQ(errno, EINVAL);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  EXPECT_EQ(Lines(text.str(), "bind probe fe80::1%mgmt0"), 1) << text.str();
  EXPECT_EQ(Lines(text.str(), "bind probe fe80::2%mgmt1"), 1) << text.str();
  EXPECT_EQ(Lines(text.str(), "an unkeyed failure"), 3) << text.str();
}

}  // namespace
}  // namespace qpconnect::rdmacm
