// SPDX-License-Identifier: MIT
// A stand-in for libibverbs, for testing the preload without a device: it
// exports the calls libqptrace.so interposes (fake_ibverbs.map gives them
// libibverbs' versions) and behaves predictably:
//   - ibv_create_qp makes QP numbers 100, 101, ...; a max_send_wr of 999 fails
//     with ENOMEM;
//   - ibv_modify_qp refuses path_mtu 4096 with EINVAL (and leaves errno EPERM,
//     so a test sees whether errno reaches the caller untouched); otherwise it
//     succeeds, moves qp->state and leaves errno at kSuccessErrno;
//   - the queries answer with a one-entry GID table (::ffff:10.0.0.1), P_Key
//     0xffff and 16 rd_atomic; the context is not an extended one, so a port
//     query gets EOPNOTSUPP.
#include <errno.h>
#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccessErrno = 77;
std::atomic<uint32_t> g_next_qpn{100};

void FakeGid(ibv_gid* gid) {
  std::memset(gid, 0, sizeof *gid);
  gid->raw[10] = 0xff;
  gid->raw[11] = 0xff;
  gid->raw[12] = 10;
  gid->raw[15] = 1;
}

}  // namespace

extern "C" {

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (init->cap.max_send_wr == 999) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* qp = static_cast<ibv_qp*>(std::calloc(1, sizeof(ibv_qp)));
  qp->context = pd->context;
  qp->pd = pd;
  qp->qp_num = g_next_qpn++;
  qp->qp_type = init->qp_type;
  qp->state = IBV_QPS_RESET;
  return qp;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  if ((mask & IBV_QP_PATH_MTU) && attr->path_mtu == IBV_MTU_4096) {
    errno = EPERM;
    return EINVAL;
  }
  if (mask & IBV_QP_STATE) qp->state = attr->qp_state;
  errno = kSuccessErrno;
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  std::free(qp);
  return 0;
}

ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr*) {
  auto* ah = static_cast<ibv_ah*>(std::calloc(1, sizeof(ibv_ah)));
  ah->pd = pd;
  ah->context = pd->context;
  return ah;
}

int ibv_query_gid(ibv_context*, uint8_t, int, ibv_gid* gid) {
  FakeGid(gid);
  return 0;
}

int _ibv_query_gid_ex(ibv_context*, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t,
                      size_t) {
  std::memset(entry, 0, sizeof *entry);
  FakeGid(&entry->gid);
  entry->gid_index = index;
  entry->port_num = port;
  entry->gid_type = IBV_GID_TYPE_ROCE_V2;
  return 0;
}

ssize_t _ibv_query_gid_table(ibv_context*, ibv_gid_entry* entries, size_t max, uint32_t, size_t) {
  if (max < 1) return -1;
  _ibv_query_gid_ex(nullptr, 1, 1, &entries[0], 0, sizeof entries[0]);
  return 1;
}

int ibv_query_pkey(ibv_context*, uint8_t, int, __be16* pkey) {
  *pkey = htons(0xffff);
  return 0;
}

int ibv_query_device(ibv_context*, ibv_device_attr* attr) {
  std::memset(attr, 0, sizeof *attr);
  attr->phys_port_cnt = 1;
  attr->max_qp_rd_atom = 16;
  attr->max_qp_init_rd_atom = 16;
  return 0;
}

}  // extern "C"
