// P_Key rules (all transports): pkey-mismatch, pkey-no-full-member.
// Source: the seed ("the P_Key value at port_num(X)'s table[pkey_index(X)] must
// equal the same at side Y - the value matters, not the index - and at least
// one of them must be a full member"); IBA vol. 1 ch. 10.9 (partitioning).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

bool Known(uint16_t pkey) { return (pkey & kPkeyPartitionMask) != 0; }
bool FullMember(uint16_t pkey) { return (pkey & kPkeyFullMember) != 0; }

std::string PkeyText(uint16_t pkey) {
  return Hex(pkey, 4) + (FullMember(pkey) ? " (full)" : " (limited)");
}

}  // namespace

void CheckPkeyRules(const Context& ctx, FindingSink& sink) {
  const uint16_t l = ctx.local.ep->keys.pkey;
  const uint16_t r = ctx.remote.ep->keys.pkey;
  // A partition of 0 is the spec's invalid P_Key; descriptions that carry no
  // P_Key (the pingpong dialect) leave it so.
  if (!Known(l) || !Known(r)) {
    const Direction d = !Known(l) && !Known(r) ? Direction::kBoth
                        : !Known(l)            ? Direction::kLocal
                                               : Direction::kRemote;
    sink.Unchecked(Rule::kPkeyMismatch, d, "a side states no P_Key");
    return;
  }
  if ((l & kPkeyPartitionMask) != (r & kPkeyPartitionMask)) {
    sink.AddPair(
        Rule::kPkeyMismatch,
        {.x_value = PkeyText(l),
         .y_value = PkeyText(r),
         .message = "the P_Keys are of different partitions (" + Hex(l & kPkeyPartitionMask, 4) +
                    " vs " + Hex(r & kPkeyPartitionMask, 4) + "): every packet is dropped",
         .fix = "choose on each side the pkey_index whose P_Key table entry holds the "
                "shared partition (indices may differ between hosts; "
                "/sys/class/infiniband/DEV/ports/N/pkeys lists them)"});
    return;
  }
  if (!FullMember(l) && !FullMember(r)) {
    sink.AddPair(Rule::kPkeyNoFullMember,
                 {.x_value = PkeyText(l),
                  .y_value = PkeyText(r),
                  .message = "both P_Keys are limited members of partition " +
                             Hex(l & kPkeyPartitionMask, 4) + ": limited members cannot talk",
                  .fix = "use a full-member P_Key (" + Hex(l | kPkeyFullMember, 4) +
                         ") on at least one side, or ask the SM admin for full membership"});
  }
}

}  // namespace qpconnect::validate_internal
