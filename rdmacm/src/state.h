// SPDX-License-Identifier: MIT
// The library's model of librdmacm's objects: event channels, events and
// communication ids, and the one lock that guards them all.
//
// A program sees `rdma_event_channel`, `rdma_cm_event` and `rdma_cm_id`
// (<rdma/rdma_cma.h>, librdmacm's ABI) and reads their fields directly. Each
// is the first member of a private struct here, so a pointer the program
// hands back converts to ours (IdOf, ChannelOf, EventOf) after a magic check.
//
// Thread-safety: every field below is guarded by library_mutex (lock.h,
// taken with LibraryLock) unless marked otherwise; clang checks the fields
// and functions annotated so. The program's threads and the engine thread (engine.h) both take
// it; nothing blocks while holding it (waits for events release it first).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "addrinfo.h"
#include "lock.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"

namespace qpconnect::verbs {
struct LocalDescription;
}

namespace qpconnect::rdmacm {

class CmLink;
class Listener;
class McGroups;  // multicast.h
struct Device;
struct QpResources;  // qp_resources.h

// Private data the IB CM carries per message (bytes), as rdma_cm exposes it to
// programs: a REQ's 92 less rdma_cm's 36-byte header (RDMA_PS_TCP), a SIDR
// REQ's 216 less 36, a REP's 196, a REJ's 148, a SIDR REP's 136.
inline constexpr uint8_t kReqPrivateTcp = 56;
inline constexpr uint8_t kReqPrivateUdp = 180;
inline constexpr uint8_t kRepPrivate = 196;
inline constexpr uint8_t kRejPrivate = 148;
inline constexpr uint8_t kSidrRepPrivate = 136;

// IB CM reject reasons rdma_cm programs see as a REJECTED event's status.
inline constexpr int kRejectInvalidServiceId = 8;  // nobody listens there
inline constexpr int kRejectConsumer = 28;         // the peer called rdma_reject
// SIDR (UD) reply statuses, which rdma_cm reports as UNREACHABLE's status.
inline constexpr int kSidrUnsupported = 1;  // nobody listens there
inline constexpr int kSidrReject = 2;       // refused

struct Id;

struct Event {
  rdma_cm_event ev{};  // first member: what rdma_get_cm_event hands out
  uint32_t magic = 0;
  uint32_t handle = 0;  // ev.id's, to find it without touching an id destroyed since
  // Once rdma_get_cm_event hands the event out: the id it holds open until
  // acked (the listener for CONNECT_REQUEST, else ev.id; rdma_destroy_id
  // waits for its `unacked` to drop to zero); nullptr before, and for a
  // synchronous id's events.
  Id* holder = nullptr;
  uint8_t data[256]{};  // the private data ev.param points into
};

struct Channel {
  rdma_event_channel pub{};  // first member; pub.fd is an eventfd (semaphore mode)
  uint32_t magic = 0;
  bool private_to_id = false;  // made for a synchronous id, freed with it
  // Posted, not yet taken by rdma_get_cm_event; guarded by `mu` (taken
  // alone by rdma_get_cm_event, inside library_mutex by everything else), so
  // that a program's event thread does not queue behind the library's lock.
  Mutex mu;
  std::deque<Event*> queue QPCM_GUARDED_BY(mu);
};

enum class IdState : uint8_t {
  kIdle,
  kBound,
  kAddrResolved,
  kRouteResolved,
  kListening,
  kConnecting,  // active: REQ sent, waiting for REP/REJ
  kResponse,    // active without a QP: REP taken, waiting for rdma_establish
  kRequest,     // passive: CONNECT_REQUEST delivered, waiting for accept/reject
  kAccepted,    // passive: REP sent, waiting for RTU
  kEstablished,
  kDisconnected,  // DREQ sent or received
  kFailed,        // rejected, unreachable or the link dropped
};
const char* IdStateName(IdState s);

// Connection parameters as one side asked for them (rdma_conn_param less the
// private data pointer).
struct ConnParams {
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
  uint8_t flow_control = 0;
  uint8_t retry_count = 7;
  uint8_t rnr_retry_count = 7;
  uint8_t srq = 0;
  uint32_t qp_num = 0;  // the program's own QP when none is on the id
};

// Enhanced Connection Establishment options (ibv_ece less its comp_mask):
// what rdma_set_local_ece stores or the provider reports, carried in a REQ
// and a REP as the IB CM carries them (ece.h).
struct Ece {
  uint32_t vendor_id = 0;  // 0: none
  uint32_t options = 0;
  bool operator==(const Ece&) const = default;
};

inline constexpr uint16_t kAutoGid = 0xffff;  // Id::gid_index: chosen when described

struct Id {
  // Every member has its initializer: the constructor is user-provided (out
  // of line, below), so `new Id{}` zeroes nothing by itself.
  rdma_cm_id pub{};  // first member: the program's rdma_cm_id
  uint32_t magic = 0;
  uint32_t handle = 0;  // names this id in messages (the peer's dst field)
  // Written only by cm_machine.h's Transition, as the table (cm_table.h) says.
  IdState state QPCM_GUARDED_BY(library_mutex) = IdState::kIdle;
  Channel* own_channel = nullptr;  // synchronous id: its private channel

  // Addressing: the device behind the local address and how it was chosen
  // ("10.77.0.1 mapped by QPCM_DEVICES to rxe0 port 1"), for every error.
  Device* device = nullptr;
  uint16_t gid_index = kAutoGid;
  std::string mapping;
  bool bound = false;

  // Options (rdma_set_option).
  std::optional<uint8_t> tos;
  std::optional<uint8_t> ack_timeout;
  bool reuseaddr = false;
  std::optional<bool> afonly;  // rdma_set_option AFONLY; unset: the family's default (ports.h)

  // ECE (ece.h): this side's (rdma_set_local_ece, or the provider's for a
  // QP rdma_create_qp made), and the peer's from its REQ or REP
  // (rdma_get_remote_ece). The CM's thread writes the peer's.
  Ece local_ece QPCM_GUARDED_BY(library_mutex);
  Ece remote_ece QPCM_GUARDED_BY(library_mutex);

  // rdma_resolve_addrinfo: a resolution started and not yet taken by
  // rdma_query_addrinfo (another is EBUSY), and its result once there.
  bool resolving_ai QPCM_GUARDED_BY(library_mutex) = false;
  UniqueAddrinfo resolved_ai QPCM_GUARDED_BY(library_mutex);

  // Listening, and what rdma_create_ep stored for rdma_get_request.
  std::shared_ptr<Listener> listener;
  // An AF-only IPv6 wildcard listener's socket on the port's IPv4 wildcard,
  // whose requests are refused as rdma_cm does (ports.h,
  // HoldsIpv4ForRefusal); closed when an IPv4 id takes the port.
  std::shared_ptr<Listener> ipv4_refuser;
  std::optional<ibv_qp_init_attr> ep_qp_attr;
  bool ep_passive = false;

  // The connection.
  std::shared_ptr<CmLink> link
      QPCM_GUARDED_BY(library_mutex);  // cm_link.h; the library's are link.h's Links
  uint32_t peer_handle = 0;
  ConnParams ours, theirs;
  uint32_t psn = 0;
  EndpointInfo local;  // this side's description (one QP)
  // The device port's description `local` was made from (devices.h's cache):
  // its base goes to the peer once per link (id_part.h).
  const verbs::LocalDescription* described = nullptr;
  std::optional<EndpointInfo> remote QPCM_GUARDED_BY(library_mutex);  // the peer's, once received
  std::optional<ConnectionPlan> plan QPCM_GUARDED_BY(library_mutex);  // what this side applies
  // What rdma_create_qp made (qp_resources.h: the QP, and the CQs when it
  // made them); null without a QP.
  std::unique_ptr<QpResources> qp_owned;
  // The multicast groups the id joined (multicast.h); null before the first
  // join. Left (the QP detached, the IP memberships dropped) with the id.
  std::unique_ptr<McGroups> groups QPCM_GUARDED_BY(library_mutex);

  // Out of line (state.cc), where QpResources and McGroups are complete.
  Id();
  ~Id();
  // When a REQ (active) or REP (passive) sent now goes unanswered, the id
  // gets UNREACHABLE (cm.cc's sweep); for a passive id whose program holds
  // the request (kRequest), when the next MRA is due.
  std::chrono::steady_clock::time_point deadline QPCM_GUARDED_BY(library_mutex){};
  std::chrono::steady_clock::time_point connect_started{};  // the REQ (active), the REP (passive)
  bool acknowledged = false;  // active: an MRA came (the peer's program holds the REQ)
  bool dreq_received = false;
  bool disconnect_reported = false;
  // Events rdma_get_cm_event handed out for this id and the program has not
  // acked: rdma_destroy_id waits for them, as librdmacm's does. Raised under
  // the channel's `mu` only while an event naming the id is queued; lowered
  // by rdma_ack_cm_event without library_mutex.
  std::atomic<uint32_t> unacked{0};
};

// Notified (without library_mutex: a waiter polls too) whenever an id's
// `unacked` count drops to zero; waited on with a LibraryLock.
std::condition_variable_any& AckedCv();

// Handle -> id, for messages from peers. Ids register at creation.
Id* FindId(uint32_t handle) QPCM_REQUIRES(library_mutex);
void RegisterId(Id* id) QPCM_REQUIRES(library_mutex);
void UnregisterId(Id* id) QPCM_REQUIRES(library_mutex);
// Every live id, in no order (for a dropped link).
template <typename F>
void ForEachId(F&& f) QPCM_REQUIRES(library_mutex);
std::unordered_map<uint32_t, Id*>& IdTable() QPCM_REQUIRES(library_mutex);

template <typename F>
void ForEachId(F&& f) QPCM_REQUIRES(library_mutex) {
  for (auto& [handle, id] : IdTable()) f(id);
}

// The private struct of a pointer the program passed; nullptr (errno EINVAL)
// if it is not one of ours.
Id* IdOf(rdma_cm_id* id);
Channel* ChannelOf(rdma_event_channel* channel);
Event* EventOf(rdma_cm_event* event);

inline constexpr uint32_t kIdMagic = 0x51434d49;       // "QCMI"
inline constexpr uint32_t kChannelMagic = 0x51434d43;  // "QCMC"
inline constexpr uint32_t kEventMagic = 0x51434d45;    // "QCME"

}  // namespace qpconnect::rdmacm
