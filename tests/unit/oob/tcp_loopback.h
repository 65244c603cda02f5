// SPDX-License-Identifier: MIT
// TcpExchangers on 127.0.0.1 for tests: a server on a free port (port 0) and
// a client of it, optionally keyed. Shared by the tcp Prepare and cancel tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/tcp.h"

namespace qpconnect::oob {

inline std::unique_ptr<TcpExchanger> LoopbackServer(std::optional<Psk> psk = std::nullopt) {
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  o.psk = std::move(psk);
  auto s = TcpExchanger::CreateServer(std::move(o));
  EXPECT_TRUE(s) << s.error().ToString();
  return s ? std::move(*s) : nullptr;
}

inline std::unique_ptr<TcpExchanger> LoopbackClient(uint16_t port,
                                                    std::optional<Psk> psk = std::nullopt) {
  TcpClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.psk = std::move(psk);
  auto c = TcpExchanger::CreateClient(std::move(o));
  EXPECT_TRUE(c) << c.error().ToString();
  return c ? std::move(*c) : nullptr;
}

}  // namespace qpconnect::oob
