// SPDX-License-Identifier: MIT
// librdmacm's multicast entry points (rdma_join_multicast(3),
// rdma_join_multicast_ex(3), rdma_leave_multicast(3)) for UD ids on RoCE
// ports, without the kernel CM: the joins themselves are multicast.h's.
// As rdma_cm: the id must be a UD id (RDMA_PS_UDP) bound to a device's
// address or address-resolved (EINVAL otherwise); the call posts
// MULTICAST_JOIN with param.ud (private_data: the program's context), or
// MULTICAST_ERROR when the QP could not be attached; a synchronous id's call
// returns with it. InfiniBand ports: ENOSYS.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>

#include "devices.h"
#include "events.h"
#include "log.h"
#include "multicast.h"
#include "state.h"
#include "sync.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

namespace {

// Completes a synchronous id's call: waits for its event without the lock
// (the analysis cannot follow a lock passed by reference).
int FinishJoin(Id* id, LibraryLock& lock) QPCM_NO_THREAD_SAFETY_ANALYSIS {
  if (!IsSync(id)) return 0;
  lock.unlock();
  return Complete(id);
}

// The log line's reason: a refusal of multicast.h's own (its operation is
// the call's name, which the line starts with already) by its detail, a
// platform's or device's failure whole.
std::string Why(const qpconnect::Error& e) {
  return e.operation.rfind("rdma_", 0) == 0 ? e.detail : e.ToString();
}

int Join(rdma_cm_id* cm_id, sockaddr* group, bool send_only, void* context, const char* call) {
  const std::string name(call);
  if (group == nullptr) return Fail(EINVAL, name + ": no group address");
  if (group->sa_family == AF_IB) return Fail(ENOSYS, name + ": AF_IB addresses are not supported");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (auto ok = CheckJoinable(*id); !ok)
    return Fail(ok.error().sys_errno, name + ": " + Why(ok.error()));
  auto described =
      Describe(*id->device, id->pub.port_num,
               id->gid_index == kAutoGid ? std::nullopt : std::optional<uint16_t>(id->gid_index));
  if (!described) return Fail(ENODEV, name + ": " + described.error().ToString());
  auto site = PickJoinSite((*described)->endpoint, &id->pub.route.addr.src_addr, id->tos);
  if (!site) return Fail(site.error().sys_errno, name + ": " + Why(site.error()));
  if (!id->groups) id->groups = std::make_unique<McGroups>(HostMcPlatform());
  auto joined = id->groups->Join(group, send_only, *site, id->pub.qp);
  EventSpec spec;
  spec.ud = true;
  spec.ud_context = context;
  if (joined) {
    spec.type = RDMA_CM_EVENT_MULTICAST_JOIN;
    spec.ah = joined->ah;
    spec.qp_num = joined->qp_num;
    spec.qkey = joined->qkey;
  } else if (joined.error().code == qpconnect::ErrorCode::kVerbs) {
    // As librdmacm's: the QP's attachment fails the join's event, not the call.
    LogLine(name + ": " + joined.error().ToString());
    spec.type = RDMA_CM_EVENT_MULTICAST_ERROR;
    spec.status = -joined.error().sys_errno;
  } else {
    return Fail(joined.error().sys_errno, name + ": " + Why(joined.error()));
  }
  PostEvent(id, spec);
  return FinishJoin(id, lock);
}

}  // namespace

extern "C" {

int rdma_join_multicast(rdma_cm_id* cm_id, sockaddr* addr, void* context) {
  return Join(cm_id, addr, false, context, "rdma_join_multicast");
}

// librdmacm's checks of the attributes: ENOTSUP for an unknown comp_mask bit,
// EINVAL without the address or a known join flag.
int rdma_join_multicast_ex(rdma_cm_id* cm_id, rdma_cm_join_mc_attr_ex* attr, void* context) {
  if (attr == nullptr) return Fail(EINVAL, "rdma_join_multicast_ex: no attributes");
  if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED)
    return Fail(ENOTSUP, "rdma_join_multicast_ex: unknown comp_mask bits");
  if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS))
    return Fail(EINVAL, "rdma_join_multicast_ex: no address in comp_mask");
  if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
      attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
    return Fail(EINVAL, "rdma_join_multicast_ex: no or unknown join flags");
  return Join(cm_id, attr->addr, attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER, context,
              "rdma_join_multicast_ex");
}

int rdma_leave_multicast(rdma_cm_id* cm_id, sockaddr* addr) {
  if (addr == nullptr) return Fail(EINVAL, "rdma_leave_multicast: no group address");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (!id->groups) return Fail(EADDRNOTAVAIL, "rdma_leave_multicast: the id has joined no group");
  if (auto left = id->groups->Leave(addr); !left)
    return Fail(left.error().sys_errno, "rdma_leave_multicast: " + Why(left.error()));
  return 0;
}

}  // extern "C"
