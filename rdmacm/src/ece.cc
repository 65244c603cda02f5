// SPDX-License-Identifier: MIT
#include "ece.h"

#include <cerrno>
#include <cstdio>

namespace qpconnect::rdmacm {
namespace {

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

Ece OnWire(const Ece& ece) { return Ece{ece.vendor_id & kEceVendorMask, ece.options}; }

std::string LocalEceRefusal(bool has_qp, uint32_t vendor_id, uint32_t comp_mask) {
  if (has_qp)
    return "the id has a QP (rdma_create_qp takes its ECE from the provider; "
           "rdma_set_local_ece is for a QP the program made)";
  if (vendor_id == 0) return "vendor_id 0 (none) is not an ECE";
  if (comp_mask != 0) return "comp_mask " + Hex(comp_mask) + " set (none is defined)";
  return "";
}

Ece ReplyEce(const Ece& local, const Ece& remote) { return Ece{remote.vendor_id, local.options}; }

EceToSet RequestQpEce(const Ece& provider, const Ece& remote) {
  if (remote.vendor_id == 0) return {};
  if (remote.vendor_id != provider.vendor_id)  // another vendor: ours, no options
    return {true, Ece{provider.vendor_id, 0}};
  return {true, remote};
}

Result<Ece> ReplyQpEce(const Ece& local, const Ece& reply) {
  if (reply.vendor_id == 0) return Ece{local.vendor_id, 0};  // the peer carries no ECE
  if (reply.vendor_id != local.vendor_id)
    return Error(ErrorCode::kIncompatible, EINVAL, "ECE", "vendor_id",
                 "the reply's ECE names vendor " + Hex(reply.vendor_id) + ", this side's is " +
                     Hex(local.vendor_id) + " (a reply returns the request's vendor)");
  return reply;
}

}  // namespace qpconnect::rdmacm
