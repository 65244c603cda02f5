// SPDX-License-Identifier: MIT
// The id-level half of RDMACM_1.4 (rdmacm/src/newer_calls.h), as
// rdma_resolve_addrinfo(3), rdma_query_addrinfo(3) and
// rdma_write_cm_event(3) and rdma-core's cma.c have it: one resolution per
// id at a time, announced by RDMA_CM_EVENT_ADDRINFO_RESOLVED and taken
// once; a program's RDMA_CM_EVENT_USER event with its status and value.
// Over one CmSide's channel (cm_fakes.h); no device.
#include "newer_calls.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cm_fakes.h"
#include "events.h"
#include "rdma_cma_newer.h"

namespace qpconnect::rdmacm {
namespace {

using testing::CmSide;
using testing::FakeClock;

// What an event on the channel says: its type as an int (the newer types are
// past Debian's enum), its id, its status and param.arg.
struct Taken {
  int type;
  Id* id;
  int status;
  uint64_t arg;
};

std::vector<Taken> Drain(CmSide& side) {
  std::vector<Taken> out;
  rdma_cm_event* e = nullptr;
  while (TakeEvent(side.channel, &e) == 0) {
    Taken t{EventCode(*e), reinterpret_cast<Id*>(e->id), e->status, 0};
    std::memcpy(&t.arg, &e->param, sizeof t.arg);  // the newer header's param.arg
    out.push_back(t);
    FreeEvent(EventOf(e));
  }
  return out;
}

// A one-entry chain, as the resolution would make.
UniqueAddrinfo OneEntry(int qp_type) {
  UniqueAddrinfo chain(static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo))));
  chain->ai_qp_type = qp_type;
  return chain;
}

class NewerCalls : public ::testing::Test {
 protected:
  ~NewerCalls() override {
    LibraryLock lock;
    for (auto& [handle, id] : IdTable()) {
      id->magic = 0;
      delete id;
    }
    IdTable().clear();
  }
  FakeClock clock;
  CmSide side{1, clock, std::chrono::milliseconds(2000)};
};

TEST_F(NewerCalls, AResolutionIsAnnouncedAndTakenOnce) {
  LibraryLock lock;
  Id* id = side.NewId();
  ASSERT_EQ(StartAddrinfo(id), 0);
  EndAddrinfo(id, OneEntry(IBV_QPT_UD));
  auto events = Drain(side);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, kEventAddrinfoResolved);
  EXPECT_EQ(events[0].id, id);
  EXPECT_EQ(events[0].status, 0);
  EXPECT_STREQ(EventName(events[0].type), "RDMA_CM_EVENT_ADDRINFO_RESOLVED");
  rdma_addrinfo* info = nullptr;
  ASSERT_EQ(TakeAddrinfo(id, &info), 0);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->ai_qp_type, IBV_QPT_UD);
  FreeAddrinfo(info);  // the program's now
  errno = 0;
  EXPECT_EQ(TakeAddrinfo(id, &info), -1);  // taken once
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(StartAddrinfo(id), 0);  // and the id may resolve again
}

TEST_F(NewerCalls, ASecondResolutionBeforeTheFirstIsTakenIsBusy) {
  LibraryLock lock;
  Id* id = side.NewId();
  ASSERT_EQ(StartAddrinfo(id), 0);
  errno = 0;
  EXPECT_EQ(StartAddrinfo(id), -1);  // resolving
  EXPECT_EQ(errno, EBUSY);
  EndAddrinfo(id, OneEntry(IBV_QPT_RC));
  errno = 0;
  EXPECT_EQ(StartAddrinfo(id), -1);  // resolved, not taken
  EXPECT_EQ(errno, EBUSY);
}

TEST_F(NewerCalls, AFailedResolutionPostsNothingAndEndsIt) {
  LibraryLock lock;
  Id* id = side.NewId();
  rdma_addrinfo* info = nullptr;
  errno = 0;
  EXPECT_EQ(TakeAddrinfo(id, &info), -1);  // nothing resolved yet
  EXPECT_EQ(errno, ENOENT);
  ASSERT_EQ(StartAddrinfo(id), 0);
  EndAddrinfo(id, nullptr);
  EXPECT_TRUE(Drain(side).empty());
  EXPECT_EQ(TakeAddrinfo(id, &info), -1);
  EXPECT_EQ(StartAddrinfo(id), 0);
}

TEST_F(NewerCalls, AUserEventCarriesItsStatusAndValue) {
  LibraryLock lock;
  Id* id = side.NewId();
  ASSERT_EQ(WriteUserEvent(id, kEventUser, -7, 0x1122334455667788ull), 0);
  auto events = Drain(side);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, kEventUser);
  EXPECT_EQ(events[0].id, id);
  EXPECT_EQ(events[0].status, -7);
  EXPECT_EQ(events[0].arg, 0x1122334455667788ull);
  EXPECT_STREQ(EventName(events[0].type), "UNKNOWN EVENT");  // as librdmacm's rdma_event_str
}

TEST_F(NewerCalls, OnlyAUserEventMayBeWritten) {
  LibraryLock lock;
  Id* id = side.NewId();
  for (int type :
       {static_cast<int>(RDMA_CM_EVENT_ESTABLISHED), kEventAddrinfoResolved, kEventInternal}) {
    errno = 0;
    EXPECT_EQ(WriteUserEvent(id, type, 0, 1), -1) << type;
    EXPECT_EQ(errno, EINVAL) << type;
  }
  EXPECT_TRUE(Drain(side).empty());
}

}  // namespace
}  // namespace qpconnect::rdmacm
