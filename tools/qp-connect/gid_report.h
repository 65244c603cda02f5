// SPDX-License-Identifier: MIT
// qp-connect's report of the joint GID choice (qpconnect/gid_pair.h), and
// the test hook that widens the window between the exchange and RTR.
#pragma once

#include <functional>
#include <string>

#include "qpconnect/gid_pair.h"

namespace qpconnect::tools {

// "qp-connect: GID pair: local [1] ::ffff:10.0.0.1 roce-v2, remote [1]
// ::ffff:10.0.0.2 roce-v2 (why; N other pairs not taken ...)\n" when a
// pair was chosen (the gid-pair-chosen finding says why each other pair was
// not taken); empty otherwise (gid-pair-none is a finding, printed as one).
std::string GidPairLine(const GidPairChoice& choice);

// Test hook: with QPC_TEST_PAUSE_BEFORE_RTR_MS=N in the environment (N in
// 1..60000), a function that sleeps N ms (ConnectorOptions::before_rtr),
// so that a lab test can change the GID table after the exchange; empty
// otherwise.
std::function<void()> PauseBeforeRtrFromEnv();

}  // namespace qpconnect::tools
