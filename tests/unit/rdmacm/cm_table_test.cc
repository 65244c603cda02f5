// SPDX-License-Identifier: MIT
// The connection manager's state table (rdmacm/src/cm_table.h) and its flow
// (cm_flow.h, cm_machine.h) over fakes of its seams (cm_fakes.h): every row
// of the table applied to an id in its state and its effect checked against
// what this file expects of its action (written here, not read from the
// table), every pair without a row refused or ignored, the table in
// docs/rdmacm.md equal to the data, no code but Transition writing an id's
// state; then the flows both sides see: RC and UD connections, a reject, the
// validator's and the device's refusals, timeouts with the fake clock, a
// peer that still talks, MRAs, dead, refused and stray links, DREQ/DREP.
#include <gtest/gtest.h>

#include <cstring>
#include <new>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cm_bases.h"
#include "cm_fakes.h"
#include "cm_flow.h"
#include "cm_machine.h"
#include "cm_table.h"
#include "ece.h"
#include "overdue.h"
#include "qpconnect/oob/codec.h"

namespace qpconnect::rdmacm {
namespace {

using std::chrono::milliseconds;
using testing::CmSide;
using testing::FakeClock;
using testing::FakeCmLink;
using testing::Ipv4;

constexpr milliseconds kTimeout{2000};

struct Ev {
  rdma_cm_event_type type;
  int status;
  Id* id;
  Id* listen;
  std::string private_data;  // as the program sees it (private_data_len bytes)
  rdma_ud_param ud;
  rdma_conn_param conn;
};

// "REJECTED 28": the event's name (as rdma_event_str, less RDMA_CM_EVENT_)
// and its status.
std::string EventText(const Ev& e) {
  const char* name = "?";
  switch (e.type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      name = "ADDR_RESOLVED";
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      name = "ROUTE_RESOLVED";
      break;
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      name = "CONNECT_REQUEST";
      break;
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      name = "CONNECT_RESPONSE";
      break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
      name = "CONNECT_ERROR";
      break;
    case RDMA_CM_EVENT_UNREACHABLE:
      name = "UNREACHABLE";
      break;
    case RDMA_CM_EVENT_REJECTED:
      name = "REJECTED";
      break;
    case RDMA_CM_EVENT_ESTABLISHED:
      name = "ESTABLISHED";
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      name = "DISCONNECTED";
      break;
    default:
      break;
  }
  return std::string(name) + " " + std::to_string(e.status);
}

// Two sides and the link between them: A (10.99.0.1) dials B's listener
// (10.99.0.2:7174); one fake clock. The id table is the process's (state.h),
// so both sides' ids are in it and either side's sweep sees them all, as one
// process's sweep would: only one World at a time.
struct World {
  FakeClock clock;
  CmSide a{1, clock, kTimeout};
  CmSide b{2, clock, kTimeout};
  std::shared_ptr<FakeCmLink> link_a = std::make_shared<FakeCmLink>(
      true, Ipv4("10.99.0.1", 40000), Ipv4("10.99.0.2", 7174), "10.99.0.2:7174");
  std::shared_ptr<FakeCmLink> link_b = std::make_shared<FakeCmLink>(
      false, Ipv4("10.99.0.2", 7174), Ipv4("10.99.0.1", 40000), "10.99.0.1:40000");
  std::vector<std::string> wire;  // "A>B REQ", as delivered

  World() { a.host.dial_to = link_a; }
  ~World() {
    // Every id any test made, directly or through a REQ.
    for (auto& [handle, id] : IdTable()) {
      id->magic = 0;
      delete id;
    }
    IdTable().clear();
  }

  // B's listening id on 10.99.0.2:7174.
  Id* Listen(rdma_port_space ps = RDMA_PS_TCP) {
    LibraryLock lock;
    Id* id = b.NewId(ps, false);
    id->pub.route.addr.src_storage = Ipv4("10.99.0.2", 7174);
    EXPECT_EQ(Transition(b.env, id, CmInput::kBind), 0);
    EXPECT_EQ(Transition(b.env, id, CmInput::kListen), 0);
    EXPECT_EQ(id->state, IdState::kListening);
    return id;
  }

  // An A id whose route to B's listener is resolved.
  Id* Resolved(rdma_port_space ps = RDMA_PS_TCP, bool with_qp = true) {
    Id* id;
    {
      LibraryLock lock;
      id = a.NewId(ps, with_qp);
      id->pub.route.addr.src_storage = Ipv4("10.99.0.1", 0);
      id->pub.route.addr.dst_storage = Ipv4("10.99.0.2", 7174);
      EXPECT_EQ(Transition(a.env, id, CmInput::kResolveAddr), 0);
      EXPECT_EQ(Transition(a.env, id, CmInput::kResolveRoute), 0);
      EXPECT_EQ(id->state, IdState::kRouteResolved);
    }
    auto events = Events(a);
    EXPECT_EQ(events.size(), 2u);
    return id;
  }

  // Delivers what each side sent, in order, until nothing is left (or only
  // `max` messages, when given).
  void Deliver(size_t max = SIZE_MAX) {
    for (size_t n = 0; n < max;) {
      if (!link_a->sent.empty()) {
        Message m = link_a->sent.front();
        link_a->sent.erase(link_a->sent.begin());
        wire.push_back(std::string("A>B ") + MsgTypeName(m.type));
        OnMessage(b.env, link_b, m);
        ++n;
      } else if (!link_b->sent.empty()) {
        Message m = link_b->sent.front();
        link_b->sent.erase(link_b->sent.begin());
        wire.push_back(std::string("B>A ") + MsgTypeName(m.type));
        OnMessage(a.env, link_a, m);
        ++n;
      } else {
        return;
      }
    }
  }

  // The events posted on `side`'s channel since the last call.
  static std::vector<Ev> Events(CmSide& side) {
    std::vector<Ev> out;
    rdma_cm_event* e = nullptr;
    while (TakeEvent(side.channel, &e) == 0) {
      Ev ev{e->event,
            e->status,
            reinterpret_cast<Id*>(e->id),
            reinterpret_cast<Id*>(e->listen_id),
            {},
            e->param.ud,
            e->param.conn};
      const void* data = e->param.conn.private_data;
      uint8_t len = e->param.conn.private_data_len;
      if (e->id != nullptr && e->id->ps == RDMA_PS_UDP) {
        data = e->param.ud.private_data;
        len = e->param.ud.private_data_len;
      }
      if (data != nullptr) ev.private_data.assign(static_cast<const char*>(data), len);
      out.push_back(ev);
      FreeEvent(EventOf(e));
    }
    return out;
  }
  static std::vector<std::string> EventTexts(CmSide& side) {
    std::vector<std::string> out;
    for (const Ev& e : Events(side)) out.push_back(EventText(e));
    return out;
  }

  // A's id connected to B's listener: A's REQ delivered, B's CONNECT_REQUEST
  // taken; the new B id returned (kRequest).
  Id* Request(Id* active, const rdma_conn_param* param = nullptr) {
    {
      LibraryLock lock;
      EXPECT_EQ(Connect(a.env, active, param), 0);
    }
    Deliver();
    auto events = Events(b);
    EXPECT_EQ(events.size(), 1u);
    if (events.empty()) return nullptr;
    EXPECT_EQ(events[0].type, RDMA_CM_EVENT_CONNECT_REQUEST);
    events[0].id->pub.qp = &b.qp_struct;  // the program's rdma_create_qp
    return events[0].id;
  }
};

// --- the table, row by row -------------------------------------------------

// What an action is expected to do to an id set up by RowFixture, written
// from docs/rdmacm.md's description of the CM, not from the table.
struct Effect {
  const char* qp;      // the QP side's calls, space-separated
  const char* sent;    // messages on the id's link
  const char* events;  // events on its channel
  bool keeps_link;
  int err;  // the call's errno when it fails, else 0
};

Effect Expected(CmAction a) {
  switch (a) {
    // clang-format off
    case CmAction::kNothing:                     return {"", "", "", true, 0};
    case CmAction::kLetGo:                       return {"", "", "", false, 0};
    case CmAction::kPostAddrResolved:            return {"", "", "ADDR_RESOLVED 0", true, 0};
    case CmAction::kPostRouteResolved:           return {"", "", "ROUTE_RESOLVED 0", true, 0};
    case CmAction::kDialAndSendReq:              return {"describe", "REQ", "", true, 0};
    case CmAction::kPostConnectRequest:          return {"", "", "CONNECT_REQUEST 0", true, 0};
    case CmAction::kValidateMoveSendRep:         return {"describe validate rtr rts", "REP", "", true, 0};
    case CmAction::kValidateSendSidrRep:         return {"describe validate", "REP", "", false, 0};
    case CmAction::kValidateMoveSendRtu:         return {"validate rtr rts", "RTU", "ESTABLISHED 0", true, 0};
    case CmAction::kValidatePostResponse:        return {"validate", "", "CONNECT_RESPONSE 0", true, 0};
    case CmAction::kValidatePostSidrEstablished: return {"validate", "", "ESTABLISHED 0", false, 0};
    case CmAction::kSendRtu:                     return {"", "RTU", "", true, 0};
    case CmAction::kPostEstablished:             return {"", "", "ESTABLISHED 0", true, 0};
    case CmAction::kExtendDeadline:              return {"", "", "", true, 0};
    case CmAction::kWaitOn:                      return {"", "", "", true, 0};
    case CmAction::kSendMra:                     return {"", "MRA", "", true, 0};
    case CmAction::kSendDreq:                    return {"error", "DREQ", "", true, 0};
    case CmAction::kQpToError:                   return {"error", "", "", true, 0};
    case CmAction::kPostDisconnectedOnDreq:      return {"", "", "DISCONNECTED 0", true, 0};
    case CmAction::kSendDrepPostDisconnected:    return {"", "DREP", "DISCONNECTED 0", false, 0};
    case CmAction::kPostDisconnectedOnDrep:      return {"", "", "DISCONNECTED 0", false, 0};
    case CmAction::kPostDisconnected:            return {"", "", "DISCONNECTED 0", true, 0};
    case CmAction::kGiveUpOnDrep:                return {"", "", "DISCONNECTED 0", false, 0};
    case CmAction::kSendDrepIfAsked:             return {"error", "DREP", "", false, 0};
    case CmAction::kDestroySendDreq:             return {"", "DREQ", "", false, 0};
    case CmAction::kDestroyRejectRequest:        return {"", "REJ 28", "", false, 0};
    case CmAction::kDestroySendDrepIfAsked:      return {"", "DREP", "", false, 0};
    case CmAction::kRefuseGone:                  return {"", "", "", true, ECONNRESET};
    case CmAction::kFailNoListener:              return {"", "", "REJECTED 8", false, 0};
    case CmAction::kFailTimedOut:                return {"", "", "UNREACHABLE -110", false, 0};
    case CmAction::kFailTimedOutQp:              return {"error", "", "UNREACHABLE -110", false, 0};
    case CmAction::kFailProtocol:                return {"", "", "UNREACHABLE -71", false, 0};
    case CmAction::kFailReset:                   return {"", "", "UNREACHABLE -104", false, 0};
    case CmAction::kFailResetQp:                 return {"error", "", "UNREACHABLE -104", false, 0};
    case CmAction::kFailQuietly:                 return {"", "", "", false, 0};
    case CmAction::kFailPeerRejected:            return {"error", "", "REJECTED 28", false, 0};
    case CmAction::kFailBadReply:                return {"", "REJ 28", "UNREACHABLE -71", false, 0};
    case CmAction::kFailValidator:               return {"", "REJ 28", "REJECTED 28", false, 0};
    case CmAction::kFailDeviceActive:            return {"error", "REJ 28", "CONNECT_ERROR -22", false, 0};
    case CmAction::kFailDevicePassive:           return {"error", "REJ 28", "", false, EINVAL};
    case CmAction::kFailProgramReject:           return {"", "REJ 28", "", false, 0};
      // clang-format on
  }
  return {"?", "?", "?", true, -1};
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string SentText(const std::vector<Message>& sent) {
  std::vector<std::string> out;
  for (const Message& m : sent)
    out.push_back(std::string(MsgTypeName(m.type)) +
                  (m.type == MsgType::kRej ? " " + std::to_string(m.reason) : ""));
  return Joined(out);
}

// The peer's (B's) REP or REQ, with its base's bytes.
Message PeerMessage(MsgType type, bool ud) {
  EndpointInfo base = testing::SideDescription(2).endpoint;
  ApplyIdPart(base, IdPart{});
  Message m;
  m.type = type;
  m.src = 4242;
  m.port_space = ud ? RDMA_PS_UDP : RDMA_PS_TCP;
  m.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
  m.qkey = ud ? RDMA_UDP_QKEY : 0;
  m.params.qp_num = 0x201;
  m.psn = 0x77;
  m.base = 9;
  m.endpoint = oob::EncodeBinary(base);
  return m;
}

// Everything an input may bring, for one row's id.
struct RowFixture {
  World w;
  Id* id = nullptr;
  Id* listener = nullptr;
  Message msg;
  std::optional<Result<EndpointInfo>> decoded;
  Error error{ErrorCode::kVerbs, EINVAL, "ibv_modify_qp INIT->RTR", "IBV_QP_PATH_MTU", "(test)"};
  CmCause cause;

  RowFixture(IdState state, CmInput input) {
    LibraryLock lock;
    const bool ud = input == CmInput::kAcceptUd || input == CmInput::kSidrRep ||
                    input == CmInput::kDisconnectUd;
    id = w.a.NewId(ud ? RDMA_PS_UDP : RDMA_PS_TCP, input != CmInput::kRepNoQp);
    id->state = state;  // set up, as a fake QP is forced into a state
    id->pub.route.addr.src_storage = Ipv4("10.99.0.1", 0);
    id->pub.route.addr.dst_storage = Ipv4("10.99.0.2", 7174);
    if (input != CmInput::kConnect) id->link = w.link_a;
    id->peer_handle = 4242;
    id->dreq_received = true;
    id->connect_started = w.clock.now - std::chrono::seconds(1);
    id->deadline = w.clock.now;
    // A peer description for the passive side's validation.
    Message req = PeerMessage(MsgType::kReq, ud);
    id->remote = testing::SideDescription(2).endpoint;
    ApplyIdPart(*id->remote, *IdPartOf(req));
    switch (input) {
      case CmInput::kReq:
        listener = w.b.NewId();
        msg = req;
        cause.msg = &msg;
        cause.listener = listener;
        break;
      case CmInput::kRep:
      case CmInput::kRepNoQp:
      case CmInput::kSidrRep:
        msg = PeerMessage(MsgType::kRep, ud);
        decoded = oob::DecodeBinary(msg.endpoint);
        cause.msg = &msg;
        cause.decoded = &decoded;
        break;
      case CmInput::kRej:
        msg.type = MsgType::kRej;
        msg.reason = kRejectConsumer;
        msg.private_data = "no";
        cause.msg = &msg;
        break;
      case CmInput::kReject:
        cause.reject_data = "why";
        cause.reject_length = 3;
        break;
      case CmInput::kDeadline:
      case CmInput::kPeerTalking:
        cause.now = w.clock.now;
        cause.heard = w.clock.now;
        break;
      case CmInput::kBadDescription:
      case CmInput::kValidatorRefused:
      case CmInput::kDeviceRefused:
        cause.error = &error;
        break;
      default:
        break;
    }
  }
};

std::string RowText(const CmRow& r) {
  return std::string(IdStateName(r.state)) + " + " + std::string(CmInputName(r.input)) + " -> " +
         IdStateName(r.next) + " (" + std::string(CmActionName(r.action)) + ")";
}

TEST(CmTable, HasOneRowPerStateAndInput) {
  std::set<std::pair<IdState, CmInput>> seen;
  for (const CmRow& r : kCmTable)
    EXPECT_TRUE(seen.insert({r.state, r.input}).second) << "duplicate: " << RowText(r);
  EXPECT_EQ(kCmRowCount, 83u);
  for (const CmRow& r : kCmTable) EXPECT_EQ(FindCmRow(r.state, r.input), &r);
}

TEST(CmTable, EveryRowHasTheEffectOfItsAction) {
  for (const CmRow& row : kCmTable) {
    SCOPED_TRACE(RowText(row));
    RowFixture f(row.state, row.input);
    int rc;
    int err = 0;
    {
      LibraryLock lock;
      errno = 0;
      rc = Transition(f.w.a.env, f.id, row.input, f.cause);
      if (rc != 0) err = errno;
    }
    Effect want = Expected(row.action);
    EXPECT_EQ(Joined(f.w.a.qp.calls(f.id)), want.qp);
    EXPECT_EQ(SentText(f.w.link_a->sent), want.sent);
    EXPECT_EQ(Joined(World::EventTexts(f.w.a)), want.events);
    EXPECT_EQ(f.id->link != nullptr, want.keeps_link);
    EXPECT_EQ(err, want.err);
    EXPECT_EQ(rc, want.err == 0 ? 0 : -1);
    EXPECT_EQ(f.id->state, row.next);
    // What some actions change besides.
    switch (row.action) {
      case CmAction::kExtendDeadline:
        EXPECT_TRUE(f.id->acknowledged);
        EXPECT_EQ(f.id->deadline, f.w.clock.now + kTimeout);
        break;
      case CmAction::kWaitOn:
        EXPECT_EQ(f.id->deadline, f.w.clock.now + kTimeout);
        break;
      case CmAction::kDialAndSendReq:
      case CmAction::kValidateMoveSendRep:
        EXPECT_EQ(f.id->deadline, f.w.clock.now + kTimeout);
        EXPECT_EQ(f.w.a.host.sweeps_armed, 1);
        break;
      case CmAction::kPostConnectRequest:
      case CmAction::kSendMra:
        EXPECT_EQ(f.id->deadline, f.w.clock.now + milliseconds(500));
        break;
      case CmAction::kPostDisconnectedOnDreq:
      case CmAction::kPostDisconnected:
      case CmAction::kGiveUpOnDrep:
        EXPECT_TRUE(f.id->disconnect_reported);
        break;
      default:
        break;
    }
  }
}

TEST(CmTable, PairsWithoutARowChangeNothing) {
  size_t pairs = 0;
  for (size_t s = 0; s < kIdStateCount; ++s) {
    for (size_t i = 0; i < kCmInputCount; ++i) {
      auto state = static_cast<IdState>(s);
      auto input = static_cast<CmInput>(i);
      if (FindCmRow(state, input) != nullptr) continue;
      ++pairs;
      SCOPED_TRACE(std::string(IdStateName(state)) + " + " + std::string(CmInputName(input)));
      RowFixture f(state, input);
      int rc;
      int err = 0;
      {
        LibraryLock lock;
        errno = 0;
        rc = Transition(f.w.a.env, f.id, input, f.cause);
        if (rc != 0) err = errno;
      }
      EXPECT_EQ(f.id->state, state);
      EXPECT_EQ(rc, IsCall(input) ? -1 : 0);
      EXPECT_EQ(err, IsCall(input) ? EINVAL : 0);
      EXPECT_TRUE(f.w.a.qp.calls(f.id).empty());
      EXPECT_TRUE(f.w.link_a->sent.empty());
      EXPECT_TRUE(World::Events(f.w.a).empty());
      EXPECT_EQ(f.id->link != nullptr, input != CmInput::kConnect);
    }
  }
  EXPECT_EQ(pairs, kIdStateCount * kCmInputCount - kCmRowCount);
}

// The sources under rdmacm/src: an id's state is written in one place.
TEST(CmTable, OnlyTransitionWritesAnIdsState) {
  const std::filesystem::path src = std::filesystem::path(QPC_SOURCE_DIR) / "rdmacm" / "src";
  const std::regex write(R"((->|\.)state\s*=[^=])");
  std::vector<std::string> writers;
  for (const auto& entry : std::filesystem::directory_iterator(src)) {
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, write))
        writers.push_back(entry.path().filename().string() + ":" + std::to_string(n));
  }
  ASSERT_EQ(writers.size(), 1u) << Joined(writers);
  EXPECT_EQ(writers[0].substr(0, writers[0].find(':')), "cm_machine.cc");
}

// docs/rdmacm.md's table, as the data gives it.
std::string TableAsDoc() {
  std::string out = "| state | input | next state | action |\n|---|---|---|---|\n";
  for (const CmRow& r : kCmTable)
    out += "| " + std::string(IdStateName(r.state)) + " | " + std::string(CmInputName(r.input)) +
           " | " + IdStateName(r.next) + " | " + std::string(CmActionText(r.action)) + " |\n";
  return out;
}

TEST(CmTable, DocsShowTheTable) {
  std::ifstream in(std::filesystem::path(QPC_SOURCE_DIR) / "docs" / "rdmacm.md");
  std::stringstream all;
  all << in.rdbuf();
  const std::string doc = all.str();
  const std::string open = "<!-- cm-table: generated from rdmacm/src/cm_table.h -->\n";
  const std::string close = "<!-- /cm-table -->";
  size_t from = doc.find(open);
  size_t to = doc.find(close);
  ASSERT_NE(from, std::string::npos) << "docs/rdmacm.md has no '" << open << "'";
  ASSERT_NE(to, std::string::npos);
  from += open.size();
  EXPECT_EQ(doc.substr(from, to - from), TableAsDoc())
      << "docs/rdmacm.md's CM table differs from rdmacm/src/cm_table.h; the data's:\n"
      << TableAsDoc();
}

// --- the flows ---------------------------------------------------------------

class CmFlow : public ::testing::Test {
 protected:
  World w;

  // A's RC id connected to B: returns B's id, both ESTABLISHED.
  std::pair<Id*, Id*> Connected() {
    w.Listen();
    Id* active = w.Resolved();
    Id* passive = w.Request(active);
    {
      LibraryLock lock;
      EXPECT_EQ(Accept(w.b.env, passive, nullptr), 0);
    }
    w.Deliver();
    EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"ESTABLISHED 0"});
    EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"ESTABLISHED 0"});
    w.wire.clear();
    w.a.qp.Forget();
    w.b.qp.Forget();
    return {active, passive};
  }

  void SweepA() {
    LibraryLock lock;
    Sweep(w.a.env);
  }
  void SweepB() {
    LibraryLock lock;
    Sweep(w.b.env);
  }
};

TEST_F(CmFlow, RcConnectsBothSides) {
  Id* listener = w.Listen();
  Id* active = w.Resolved();
  rdma_conn_param p{};
  p.private_data = "hello";
  p.private_data_len = 5;
  p.responder_resources = 4;
  p.initiator_depth = 2;
  p.retry_count = 6;
  p.rnr_retry_count = 5;
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, &p), 0);
  }
  EXPECT_EQ(active->state, IdState::kConnecting);
  EXPECT_EQ(w.a.host.dials, 1);
  EXPECT_EQ(w.a.host.dial_timeout, kTimeout);
  w.Deliver();
  auto req = World::Events(w.b);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].type, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_EQ(req[0].listen, listener);
  EXPECT_EQ(req[0].private_data, std::string("hello") + std::string(51, '\0'));  // 56 bytes
  EXPECT_EQ(req[0].conn.responder_resources, 2);  // the peer's initiator depth
  EXPECT_EQ(req[0].conn.initiator_depth, 4);
  EXPECT_EQ(req[0].conn.qp_num, w.a.qp_struct.qp_num);
  Id* passive = req[0].id;
  passive->pub.qp = &w.b.qp_struct;  // the program's rdma_create_qp
  EXPECT_EQ(passive->state, IdState::kRequest);
  EXPECT_EQ(passive->link, w.link_b);
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  EXPECT_EQ(passive->state, IdState::kAccepted);
  // As librdmacm: the passive QP is at RTS when rdma_accept returns.
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "describe validate rtr rts");
  EXPECT_FALSE(w.b.qp.last_active);
  w.Deliver();
  EXPECT_EQ(w.wire, (std::vector<std::string>{"A>B REQ", "B>A REP", "A>B RTU"}));
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe validate rtr rts");
  EXPECT_TRUE(w.a.qp.last_active);
  EXPECT_EQ(w.a.qp.last_link_ends.size(), 2u);  // both ends of the link, as GIDs
  auto est_a = World::Events(w.a);
  ASSERT_EQ(est_a.size(), 1u);
  EXPECT_EQ(est_a[0].type, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(est_a[0].conn.qp_num, w.b.qp_struct.qp_num);
  EXPECT_EQ(est_a[0].private_data.size(), size_t{kRepPrivate});
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"ESTABLISHED 0"});
  EXPECT_EQ(active->state, IdState::kEstablished);
  EXPECT_EQ(passive->state, IdState::kEstablished);
  // Both descriptions went once over the link, each rebuilt on the other side.
  ASSERT_TRUE(passive->remote && active->remote);
  EXPECT_EQ(passive->remote->qps[0].qpn, w.a.qp_struct.qp_num);
  EXPECT_EQ(active->remote->qps[0].qpn, w.b.qp_struct.qp_num);
}

TEST_F(CmFlow, SecondRequestOnTheLinkCarriesNoDescription) {
  w.Listen();
  Id* first = w.Resolved();
  Id* second = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, first, nullptr), 0);
    ASSERT_EQ(Connect(w.a.env, second, nullptr), 0);
  }
  ASSERT_EQ(w.link_a->sent.size(), 2u);
  EXPECT_FALSE(w.link_a->sent[0].endpoint.empty());
  EXPECT_TRUE(w.link_a->sent[1].endpoint.empty());
  EXPECT_EQ(w.link_a->sent[0].base, w.link_a->sent[1].base);
  w.Deliver();
  EXPECT_EQ(World::Events(w.b).size(), 2u);
}

TEST_F(CmFlow, UdIsOneSidrExchange) {
  w.Listen(RDMA_PS_UDP);
  Id* active = w.Resolved(RDMA_PS_UDP);
  Id* passive = w.Request(active);
  ASSERT_NE(passive, nullptr);
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "describe validate");  // no RTR/RTS for UD
  EXPECT_EQ(passive->state, IdState::kEstablished);
  EXPECT_EQ(passive->link, nullptr);
  w.Deliver();
  EXPECT_EQ(w.wire, (std::vector<std::string>{"A>B REQ", "B>A REP"}));
  auto est = World::Events(w.a);
  ASSERT_EQ(est.size(), 1u);
  EXPECT_EQ(est[0].type, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(est[0].ud.qp_num, w.b.qp_struct.qp_num);
  EXPECT_EQ(est[0].ud.qkey, uint32_t{RDMA_UDP_QKEY});
  EXPECT_EQ(est[0].ud.ah_attr.is_global, 1);
  EXPECT_EQ(active->link, nullptr);
  EXPECT_TRUE(World::Events(w.b).empty());  // no ESTABLISHED on the passive side of UD
  {
    LibraryLock lock;
    EXPECT_EQ(Disconnect(w.a.env, active), 0);  // the QP to ERROR, nothing sent
  }
  EXPECT_EQ(active->state, IdState::kEstablished);
  EXPECT_TRUE(w.link_a->sent.empty());
}

TEST_F(CmFlow, AProgramRejectsWithItsPrivateData) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  {
    LibraryLock lock;
    EXPECT_EQ(Reject(w.b.env, passive, "busy", 4), 0);
  }
  EXPECT_EQ(passive->state, IdState::kFailed);
  EXPECT_EQ(passive->link, nullptr);
  EXPECT_TRUE(World::Events(w.b).empty());
  w.Deliver();
  auto rej = World::Events(w.a);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(EventText(rej[0]), "REJECTED 28");
  EXPECT_EQ(rej[0].private_data, std::string("busy") + std::string(144, '\0'));  // 148 bytes
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe error");  // as librdmacm on REJECTED
  EXPECT_EQ(active->state, IdState::kFailed);
  // Too much private data, or an id not requesting: refused, nothing changes.
  Id* other = w.Request(w.Resolved());
  std::string big(149, 'x');
  LibraryLock lock;
  errno = 0;
  EXPECT_EQ(Reject(w.b.env, other, big.data(), 149), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(other->state, IdState::kRequest);
  EXPECT_EQ(Reject(w.b.env, passive, nullptr, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(CmFlow, ARejectedUdRequestIsUnreachable) {
  w.Listen(RDMA_PS_UDP);
  Id* active = w.Resolved(RDMA_PS_UDP);
  Id* passive = w.Request(active);
  {
    LibraryLock lock;
    EXPECT_EQ(Reject(w.b.env, passive, nullptr, 0), 0);
  }
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE 2"});  // SIDR: rejected
}

TEST_F(CmFlow, ThePassiveValidatorRefusesOnBothSides) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  w.b.qp.refuse_validate = true;
  {
    LibraryLock lock;
    EXPECT_EQ(Accept(w.b.env, passive, nullptr), 0);  // the event says it, as rdma_cm's REJ
  }
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "describe validate");  // no QP moved
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"REJECTED 28"});
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"REJECTED 28"});
  EXPECT_EQ(active->state, IdState::kFailed);
  EXPECT_EQ(passive->state, IdState::kFailed);
  ASSERT_EQ(w.wire.size(), 2u);
  EXPECT_EQ(w.wire[1], "B>A REJ");
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe error");  // INIT only, then ERROR
}

TEST_F(CmFlow, TheActiveValidatorRefusesOnBothSides) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  w.a.qp.refuse_validate = true;
  {
    LibraryLock lock;
    EXPECT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  w.Deliver();
  EXPECT_EQ(w.wire, (std::vector<std::string>{"A>B REQ", "B>A REP", "A>B REJ"}));
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe validate");
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"REJECTED 28"});
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"REJECTED 28"});
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "describe validate rtr rts error");
  EXPECT_EQ(passive->link, nullptr);
}

// (One world at a time: the id table is the process's.)
TEST(CmFlowDevice, RefusesTheActiveRtrOrRts) {
  for (bool at_rtr : {true, false}) {
    SCOPED_TRACE(at_rtr ? "RTR" : "RTS");
    World v;
    v.Listen();
    Id* active = v.Resolved();
    Id* passive = v.Request(active);
    v.a.qp.refuse_rtr = at_rtr;
    v.a.qp.refuse_rts = !at_rtr;
    {
      LibraryLock lock;
      EXPECT_EQ(Accept(v.b.env, passive, nullptr), 0);
    }
    v.Deliver();
    EXPECT_EQ(Joined(v.a.qp.calls(active)),
              at_rtr ? "describe validate rtr error" : "describe validate rtr rts error");
    EXPECT_EQ(World::EventTexts(v.a),
              std::vector<std::string>{at_rtr ? "CONNECT_ERROR -22" : "CONNECT_ERROR -5"});
    EXPECT_EQ(active->state, IdState::kFailed);
    // The peer is told: its REP is refused.
    EXPECT_EQ(v.wire.back(), "A>B REJ");
    EXPECT_EQ(World::EventTexts(v.b), std::vector<std::string>{"REJECTED 28"});
    EXPECT_EQ(Joined(v.b.qp.calls(passive)), "describe validate rtr rts error");
  }
}

TEST(CmFlowDevice, RefusesThePassiveRtrOrRtsAndAcceptFails) {
  for (bool at_rtr : {true, false}) {
    SCOPED_TRACE(at_rtr ? "RTR" : "RTS");
    World v;
    v.Listen();
    Id* active = v.Resolved();
    Id* passive = v.Request(active);
    v.b.qp.refuse_rtr = at_rtr;
    v.b.qp.refuse_rts = !at_rtr;
    {
      LibraryLock lock;
      errno = 0;
      EXPECT_EQ(Accept(v.b.env, passive, nullptr), -1);
      EXPECT_EQ(errno, at_rtr ? EINVAL : EIO);
    }
    EXPECT_EQ(Joined(v.b.qp.calls(passive)),
              at_rtr ? "describe validate rtr error" : "describe validate rtr rts error");
    EXPECT_TRUE(World::Events(v.b).empty());
    EXPECT_EQ(passive->state, IdState::kFailed);
    v.Deliver();
    EXPECT_EQ(v.wire.back(), "B>A REJ");
    EXPECT_EQ(World::EventTexts(v.a), std::vector<std::string>{"REJECTED 28"});
  }
}

// A new id on memory an old one left (the allocator reuses it): nothing of
// the old one shows through. Id's constructor is out of line (state.cc), so
// `new Id{}` zeroes only what the members' initializers zero; a garbage
// pub.qp made perftest's second rdma_create_qp fail ("the id already has a
// QP", lab_rdmacm_ib_send_bw_mgmt).
TEST(CmIds, ANewIdStartsClearOnReusedMemory) {
  alignas(Id) unsigned char buffer[sizeof(Id)];
  std::memset(buffer, 0xa5, sizeof buffer);
  Id* id = new (buffer) Id{};
  EXPECT_EQ(id->pub.qp, nullptr);
  EXPECT_EQ(id->pub.verbs, nullptr);
  EXPECT_EQ(id->pub.channel, nullptr);
  EXPECT_EQ(id->pub.event, nullptr);
  EXPECT_EQ(id->pub.route.path_rec, nullptr);
  EXPECT_EQ(id->magic, 0u);
  EXPECT_EQ(id->handle, 0u);
  {
    LibraryLock lock;
    EXPECT_EQ(id->state, IdState::kIdle);
  }
  id->~Id();
}

// Issue 38: the composer reads the chosen GID again before RTR; a change is
// the validator's kind of refusal (nothing modified): REJECTED 28 on both
// sides, as a refused pair, not the device's CONNECT_ERROR.
TEST(CmFlowGid, AGidChangedBeforeTheActiveRtrIsRejectedOnBothSides) {
  World v;
  v.Listen();
  Id* active = v.Resolved();
  Id* passive = v.Request(active);
  v.a.qp.gid_changed = true;
  {
    LibraryLock lock;
    EXPECT_EQ(Accept(v.b.env, passive, nullptr), 0);
  }
  v.Deliver();
  EXPECT_EQ(Joined(v.a.qp.calls(active)), "describe validate");  // no modify
  EXPECT_EQ(World::EventTexts(v.a), std::vector<std::string>{"REJECTED 28"});
  EXPECT_EQ(v.wire.back(), "A>B REJ");
  EXPECT_EQ(World::EventTexts(v.b), std::vector<std::string>{"REJECTED 28"});
  EXPECT_EQ(active->state, IdState::kFailed);
}

TEST(CmFlowGid, AGidChangedBeforeThePassiveRtrRejectsTheRequest) {
  World v;
  v.Listen();
  Id* active = v.Resolved();
  Id* passive = v.Request(active);
  v.b.qp.gid_changed = true;
  {
    LibraryLock lock;
    EXPECT_EQ(Accept(v.b.env, passive, nullptr), 0);  // as for the validator's refusal
  }
  EXPECT_EQ(Joined(v.b.qp.calls(passive)), "describe validate");
  EXPECT_EQ(World::EventTexts(v.b), std::vector<std::string>{"REJECTED 28"});
  v.Deliver();
  EXPECT_EQ(v.wire.back(), "B>A REJ");
  EXPECT_EQ(World::EventTexts(v.a), std::vector<std::string>{"REJECTED 28"});
}

TEST_F(CmFlow, NoAnswerWithinTheTimeoutIsUnreachable) {
  w.Listen();
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  EXPECT_EQ(w.a.host.sweeps_armed, 1);
  w.link_a->sent.clear();  // the peer's process is stopped: nothing reaches it
  w.clock.now += kTimeout - milliseconds(1);
  SweepA();
  EXPECT_TRUE(World::Events(w.a).empty());
  EXPECT_EQ(w.a.host.sweeps_armed, 2);  // still waiting
  w.clock.now += milliseconds(1);
  SweepA();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -110"});
  EXPECT_EQ(active->state, IdState::kFailed);
  EXPECT_EQ(active->link, nullptr);
  EXPECT_EQ(w.a.host.sweeps_armed, 2);  // nothing left to wait for
}

TEST_F(CmFlow, APeerThatStillTalksWaitsOn) {
  w.Listen();
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  w.link_a->sent.clear();
  // Past the deadline, but the peer's frames keep coming.
  w.clock.now += kTimeout;
  w.link_a->heard = w.clock.now - milliseconds(100);
  SweepA();
  EXPECT_TRUE(World::Events(w.a).empty());
  EXPECT_EQ(active->state, IdState::kConnecting);
  EXPECT_EQ(active->deadline, w.link_a->heard + kTimeout);
  // Its bytes wait unread here: heard now.
  w.clock.now = active->deadline;
  w.link_a->unread = 100;
  SweepA();
  EXPECT_TRUE(World::Events(w.a).empty());
  EXPECT_EQ(active->deadline, w.clock.now + kTimeout);
  // Silent since: UNREACHABLE, saying for how long.
  w.link_a->unread = 0;
  w.clock.now = active->deadline;
  SweepA();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -110"});
}

TEST_F(CmFlow, APeerThatTalksIsGivenUpAtTheMraBound) {
  w.Listen();
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  w.link_a->sent.clear();
  w.clock.now = active->connect_started + kMraBound;
  w.link_a->heard = w.clock.now;
  SweepA();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -110"});
}

TEST_F(CmFlow, MrasKeepAHeldRequestAlive) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  ASSERT_NE(passive, nullptr);
  // B's program holds the request: B's sweep says so every 0.5 s (one MRA
  // per link however many requests).
  Id* second = w.Request(w.Resolved());
  ASSERT_NE(second, nullptr);
  w.clock.now += milliseconds(500);
  SweepB();
  ASSERT_EQ(w.link_b->sent.size(), 1u);
  EXPECT_EQ(w.link_b->sent[0].type, MsgType::kMra);
  const auto started = active->connect_started;
  w.Deliver();
  EXPECT_TRUE(active->acknowledged);
  EXPECT_EQ(active->deadline, w.clock.now + kTimeout);
  // B's sweep (every 0.2 s in the library; 0.25 s here) keeps saying so:
  // A waits past its first deadline, up to rdma_cm's bound for a held
  // request, then gives up.
  std::chrono::steady_clock::time_point gave_up{};
  while (w.clock.now < started + kMraBound + kTimeout) {
    w.clock.now += milliseconds(250);
    SweepB();
    w.Deliver();
    SweepA();
    auto events = World::EventTexts(w.a);
    if (events.empty()) continue;
    gave_up = w.clock.now;
    EXPECT_EQ(events, (std::vector<std::string>{"UNREACHABLE -110", "UNREACHABLE -110"}));
    break;
  }
  EXPECT_GE(gave_up, started + kMraBound);
  EXPECT_LT(gave_up, started + kMraBound + milliseconds(250));
  EXPECT_EQ(active->deadline, started + kMraBound);
  // B's program still holds the requests whose peer gave up.
  EXPECT_EQ(passive->state, IdState::kRequest);
}

TEST_F(CmFlow, ADeadPeerBeforeItsReplyIsUnreachable) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  OnLinkDown(w.a.env, w.link_a, CmInput::kLinkDropped, "the peer closed the link");
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -104"});
  EXPECT_EQ(active->state, IdState::kFailed);
  EXPECT_EQ(active->link, nullptr);
  // Its side of the story: the request dies with the link; rdma_accept says so.
  OnLinkDown(w.b.env, w.link_b, CmInput::kLinkDropped, "the peer closed the link");
  EXPECT_TRUE(World::Events(w.b).empty());
  LibraryLock lock;
  errno = 0;
  EXPECT_EQ(Accept(w.b.env, passive, nullptr), -1);
  EXPECT_EQ(errno, ECONNRESET);
}

TEST_F(CmFlow, ADeadPeerBeforeTheRtuIsUnreachable) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  OnLinkDown(w.b.env, w.link_b, CmInput::kLinkDropped, "the peer closed the link");
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"UNREACHABLE -104"});
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "describe validate rtr rts error");
}

TEST_F(CmFlow, ADeadPeerOnceConnectedIsDisconnected) {
  auto [active, passive] = Connected();
  OnLinkDown(w.a.env, w.link_a, CmInput::kLinkDropped, "the peer's process died");
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(active->state, IdState::kDisconnected);
  EXPECT_EQ(active->link, nullptr);
  OnLinkDown(w.b.env, w.link_b, CmInput::kLinkProtocol, "a frame failed authentication");
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(passive->state, IdState::kDisconnected);
}

TEST_F(CmFlow, ARefusedLinkIsRejectedWithStatus8) {
  Id* rc = w.Resolved();
  Id* ud = w.Resolved(RDMA_PS_UDP);
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, rc, nullptr), 0);
    ASSERT_EQ(Connect(w.a.env, ud, nullptr), 0);
  }
  OnLinkDown(w.a.env, w.link_a, CmInput::kLinkRefused, "connection refused");
  auto events = World::Events(w.a);
  ASSERT_EQ(events.size(), 2u);
  for (const Ev& e : events)
    EXPECT_EQ(EventText(e), e.id == rc ? "REJECTED 8" : "UNREACHABLE 1");  // SIDR: unsupported
}

TEST_F(CmFlow, AStrayPeerIsAProtocolError) {
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  OnLinkDown(w.a.env, w.link_a, CmInput::kLinkProtocol, "not a qpcm peer");
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -71"});
  EXPECT_EQ(w.a.host.dials, 1);
}

TEST_F(CmFlow, AReplyWhoseDescriptionDoesNotDecodeIsAProtocolError) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  ASSERT_EQ(w.link_b->sent.size(), 1u);
  w.link_b->sent[0].endpoint = "\x0a\xff garbage";  // stray bytes where the base was
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"UNREACHABLE -71"});
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe");  // nothing validated or moved
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"REJECTED 28"});
}

TEST_F(CmFlow, ARequestOnAClientLinkOrForNobodyIsRefused) {
  // A REQ arriving on a link this side dialed: ignored.
  OnMessage(w.a.env, w.link_a, PeerMessage(MsgType::kReq, false));
  EXPECT_TRUE(w.link_a->sent.empty());
  // No listener: parked for a new one, then refused with status 8.
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  w.Deliver();
  EXPECT_EQ(w.b.host.later.size(), 1u);  // polled again in 20 ms
  w.clock.now += milliseconds(2000);
  w.b.host.RunLater();
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"REJECTED 8"});
}

TEST_F(CmFlow, ARequestWaitsForANewListener) {
  Id* active = w.Resolved();
  {
    LibraryLock lock;
    ASSERT_EQ(Connect(w.a.env, active, nullptr), 0);
  }
  w.Deliver();
  EXPECT_TRUE(World::Events(w.b).empty());
  w.Listen();  // perftest -R listens again on the same port
  w.clock.now += milliseconds(20);
  w.b.host.RunLater();
  auto req = World::Events(w.b);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0].type, RDMA_CM_EVENT_CONNECT_REQUEST);
}

TEST_F(CmFlow, DisconnectIsADreqAndADrep) {
  auto [active, passive] = Connected();
  {
    LibraryLock lock;
    ASSERT_EQ(Disconnect(w.a.env, active), 0);
  }
  EXPECT_EQ(active->state, IdState::kDisconnected);
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "error");
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_TRUE(World::Events(w.a).empty());  // until the DREP
  {
    LibraryLock lock;
    ASSERT_EQ(Disconnect(w.b.env, passive), 0);
  }
  EXPECT_EQ(Joined(w.b.qp.calls(passive)), "error");
  EXPECT_EQ(passive->link, nullptr);
  w.Deliver();
  EXPECT_EQ(w.wire, (std::vector<std::string>{"A>B DREQ", "B>A DREP"}));
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(active->link, nullptr);
  // Once more: nothing to do, nothing reported twice.
  LibraryLock lock;
  EXPECT_EQ(Disconnect(w.a.env, active), 0);
  EXPECT_TRUE(World::Events(w.a).empty());
}

TEST_F(CmFlow, DreqsThatCrossEndBothSides) {
  auto [active, passive] = Connected();
  {
    LibraryLock lock;
    ASSERT_EQ(Disconnect(w.a.env, active), 0);
    ASSERT_EQ(Disconnect(w.b.env, passive), 0);
  }
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(active->link, nullptr);
  EXPECT_EQ(passive->link, nullptr);
}

TEST_F(CmFlow, AnUnansweredDreqDisconnectsAfterTheTimeout) {
  auto [active, passive] = Connected();
  (void)passive;
  {
    LibraryLock lock;
    ASSERT_EQ(Disconnect(w.a.env, active), 0);
  }
  w.link_a->sent.clear();  // the peer is stopped
  w.clock.now += kTimeout - milliseconds(1);
  SweepA();
  EXPECT_TRUE(World::Events(w.a).empty());
  w.clock.now += milliseconds(1);
  SweepA();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"DISCONNECTED 0"});
  EXPECT_EQ(active->link, nullptr);
}

TEST_F(CmFlow, ADestroyedIdStillAnswersADreq) {
  auto [active, passive] = Connected();
  {
    LibraryLock lock;
    ASSERT_EQ(Disconnect(w.a.env, active), 0);
  }
  w.Deliver();  // B: DISCONNECTED, the DREP waits for rdma_disconnect
  {
    LibraryLock lock;
    Forget(w.b.env, passive);  // rdma_destroy_id instead
  }
  EXPECT_EQ(passive->state, IdState::kIdle);
  w.Deliver();
  EXPECT_EQ(w.wire.back(), "B>A DREP");
  (void)World::Events(w.b);
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"DISCONNECTED 0"});
}

TEST_F(CmFlow, AProgramThatMovesItsOwnQpEstablishesIt) {
  w.Listen();
  Id* active = w.Resolved(RDMA_PS_TCP, /*with_qp=*/false);
  rdma_conn_param p{};
  p.qp_num = 0x345;
  Id* passive = w.Request(active, &p);
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"CONNECT_RESPONSE 0"});
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe validate");
  EXPECT_EQ(active->state, IdState::kResponse);
  {
    LibraryLock lock;
    ASSERT_EQ(Establish(w.a.env, active), 0);
  }
  w.Deliver();
  EXPECT_EQ(active->state, IdState::kEstablished);
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"ESTABLISHED 0"});
  EXPECT_EQ(passive->remote->qps[0].qpn, 0x345u);
}

// Issue 39: ECE over the exchange, as librdmacm's over the IB CM (ece.h).
// Programs that make their own QPs: the active side's ECE in the REQ, the
// passive side's remote ECE; the REP with the request's vendor and the
// passive side's options; the active side's remote ECE.
TEST_F(CmFlow, EceGoesInTheReqAndComesBackInTheRep) {
  w.Listen();
  Id* active = w.Resolved(RDMA_PS_TCP, /*with_qp=*/false);
  active->local_ece = Ece{0xab0002c9, 0x5a5a};  // the IB CM keeps 24 bits of a vendor
  rdma_conn_param p{};
  p.qp_num = 0x345;
  Id* passive = w.Request(active, &p);
  EXPECT_EQ(passive->remote_ece, (Ece{0x0002c9, 0x5a5a}));
  passive->local_ece = Ece{0x0002c9, 0x5a};  // what the passive program keeps
  rdma_conn_param q{};
  q.qp_num = 0x678;
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, &q), 0);
  }
  ASSERT_EQ(w.link_b->sent.size(), 1u);
  EXPECT_EQ(w.link_b->sent[0].ece, (Ece{0x0002c9, 0x5a}));
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"CONNECT_RESPONSE 0"});
  EXPECT_EQ(active->remote_ece, (Ece{0x0002c9, 0x5a}));
}

// An id with its QP: the REP's ECE is set on the QP before RTR; a REP
// without one (a peer whose program set none) sets this side's vendor with
// no options; a REP naming another vendor is refused as a device's refusal.
TEST_F(CmFlow, TheActiveQpTakesTheRepsEceBeforeRtr) {
  w.Listen();
  Id* active = w.Resolved();
  active->local_ece = Ece{0x02c9, 7};  // as the provider reported it
  Id* passive = w.Request(active);
  passive->pub.qp = &w.b.qp_struct;
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"ESTABLISHED 0"});
  // The passive side's ECE is its own (no rdma_create_qp ran in this fake):
  // none, so the REP returns the request's vendor with no options.
  ASSERT_EQ(w.a.qp.ece_set.count(active), 1u);
  EXPECT_EQ(w.a.qp.ece_set[active], (Ece{0x02c9, 0}));
  EXPECT_EQ(w.a.qp.ece_after[active], 2u);  // after "describe validate", before "rtr"
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe validate rtr rts");
  EXPECT_EQ(active->remote_ece, (Ece{0x02c9, 0}));
}

TEST_F(CmFlow, ARepNamingAnotherEceVendorIsAConnectError) {
  w.Listen();
  Id* active = w.Resolved();
  active->local_ece = Ece{0x02c9, 7};
  Id* passive = w.Request(active);
  passive->pub.qp = &w.b.qp_struct;
  passive->remote_ece = Ece{0x1234, 0};  // a peer that breaks the rule
  {
    LibraryLock lock;
    ASSERT_EQ(Accept(w.b.env, passive, nullptr), 0);
  }
  w.Deliver();
  EXPECT_EQ(World::EventTexts(w.a), std::vector<std::string>{"CONNECT_ERROR -22"});
  EXPECT_EQ(Joined(w.a.qp.calls(active)), "describe validate error");  // no RTR
  EXPECT_EQ(w.wire.back(), "A>B REJ");
  EXPECT_EQ(World::EventTexts(w.b), std::vector<std::string>{"REJECTED 28"});
}

TEST_F(CmFlow, RejectEceIsReason35WithThePrivateData) {
  w.Listen();
  Id* active = w.Resolved();
  Id* passive = w.Request(active);
  {
    LibraryLock lock;
    EXPECT_EQ(Reject(w.b.env, passive, "ece", 3, kRejectVendorOptionNotSupported), 0);
  }
  EXPECT_EQ(passive->state, IdState::kFailed);
  w.Deliver();
  auto rej = World::Events(w.a);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(EventText(rej[0]), "REJECTED 35");
  EXPECT_EQ(rej[0].private_data.substr(0, 3), "ece");
}

TEST_F(CmFlow, CallsInTheWrongStateFailWithEinval) {
  Id* id = w.Resolved();
  LibraryLock lock;
  errno = 0;
  EXPECT_EQ(Accept(w.a.env, id, nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(Disconnect(w.a.env, id), -1);
  EXPECT_EQ(Establish(w.a.env, id), -1);
  EXPECT_EQ(CheckCall(id, CmInput::kListen), -1);
  EXPECT_EQ(id->state, IdState::kRouteResolved);
  // Bad arguments: refused before anything changes.
  rdma_conn_param p{};
  std::string big(57, 'x');
  p.private_data = big.data();
  p.private_data_len = 57;
  EXPECT_EQ(Connect(w.a.env, id, &p), -1);
  p.private_data_len = 0;
  p.responder_resources = 17;  // the device's max_qp_rd_atom is 16
  EXPECT_EQ(Connect(w.a.env, id, &p), -1);
  w.a.qp.refuse_describe = true;
  EXPECT_EQ(Connect(w.a.env, id, nullptr), -1);
  EXPECT_EQ(id->state, IdState::kRouteResolved);
  EXPECT_EQ(w.a.host.dials, 0);
}

}  // namespace
}  // namespace qpconnect::rdmacm
