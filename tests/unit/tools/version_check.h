// SPDX-License-Identifier: MIT
// The --version contract every tool keeps (docs/packaging.md): exit 0, nothing
// on stderr, first line "<tool> (qpconnect) X.Y.Z" (the line help2man reads for
// the man page), second line the library's version and every wire version;
// and --help lists --version.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/version.h"
#include "version.h"

namespace qpconnect::tools {

using ToolRun = std::function<int(const std::vector<std::string>&, std::ostream&, std::ostream&)>;

inline void ExpectVersionContract(const std::string& tool, const ToolRun& run) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"--version"}, out, err), 0);
  EXPECT_EQ(err.str(), "");
  std::istringstream lines(out.str());
  std::string first, second, rest;
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, rest, '\0');
  EXPECT_EQ(first, tool + " (qpconnect) " + std::string(ProjectVersion()));
  EXPECT_THAT(std::string(ProjectVersion()), testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  // The four versions: the tool's (first line), the library's, the endpoint
  // format's and the qpcm wire protocol's.
  EXPECT_THAT(second,
              testing::MatchesRegex("Library libqpconnect [0-9]+\\.[0-9]+\\.[0-9]+, endpoint "
                                    "wire format [0-9]+\\.[0-9]+, out-of-band frame "
                                    "[0-9]+, qpcm protocol [0-9]+\\."));
  EXPECT_THAT(second, testing::HasSubstr("libqpconnect " + std::string(LibraryVersion()) + ","));
  EXPECT_EQ(rest, "");

  std::ostringstream help, help_err;
  EXPECT_EQ(run({"--help"}, help, help_err), 0);
  EXPECT_THAT(help.str(), testing::HasSubstr("--version"));
}

}  // namespace qpconnect::tools
