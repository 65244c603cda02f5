// SPDX-License-Identifier: MIT
// The out-of-band link as the connection manager sees it: what it sends and
// asks of a link, and what it keeps per link. link.h's Link is the one
// implementation in the library (Link : CmLink); the CM's unit tests give it
// a fake (tests/unit/rdmacm/cm_fakes.h), so the CM runs without sockets or
// the engine thread.
//
// Thread-safety: Send may be called from any thread; the other calls and the
// book are the engine thread's and Lock()'s, as link.h says of Link's.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "address.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "wire.h"

namespace qpconnect::rdmacm {

class CmLink {
 public:
  virtual ~CmLink() = default;

  // Queues `msg` for the peer; never blocks on the network.
  virtual void Send(const Message& msg) = 0;
  // "10.77.0.1:7174", for log lines.
  virtual const std::string& peer_text() const = 0;
  // When the last frame came from the peer (time_point{} if none yet).
  virtual std::chrono::steady_clock::time_point last_heard() const = 0;
  // Bytes from the peer not yet taken (its answer may be among them).
  virtual size_t Unread() = 0;
  // This side dialed the link (a listener's links take requests).
  virtual bool client() const = 0;
  // The two ends' addresses (the local one: where the client reached us).
  virtual const sockaddr_storage& local() const = 0;
  virtual const sockaddr_storage& remote() const = 0;
  // The link is down (no more messages either way).
  virtual bool failed() const = 0;

  // What the CM keeps per link, under Lock().
  struct ParkedRequest {
    Message msg;
    std::optional<Result<EndpointInfo>> decoded;
    std::chrono::steady_clock::time_point since;
  };
  struct Book {
    // Server side: the placement of local(), computed once.
    std::optional<Placement> placement;
    std::optional<Error> placement_error;
    // Description bases (id_part.h): those of the peer, decoded, by its
    // numbers (at most kMaxBases), and the numbers of ours it has.
    std::map<uint32_t, EndpointInfo> peer_bases;
    std::set<uint32_t> bases_sent;
    // Server side: requests that came while no id listened on local() (a
    // program that destroys its listener and listens again on the same
    // port), in order, waiting a short grace for a listener (cm.cc).
    std::deque<ParkedRequest> parked;
  };
  static constexpr size_t kMaxBases = 64;
  Book book;
};

}  // namespace qpconnect::rdmacm
