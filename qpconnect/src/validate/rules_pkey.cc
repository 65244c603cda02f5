// SPDX-License-Identifier: MIT
// P_Key rules (all transports): pkey-mismatch, pkey-no-full-member,
// pkey-index-not-published.
// Source: the seed ("the P_Key value at port_num(X)'s table[pkey_index(X)] must
// equal the same at side Y - the value matters, not the index - and at least
// one of them must be a full member"); IBA vol. 1 ch. 10.9 (partitioning);
// ibv_modify_qp(3) (pkey_index, set at INIT).
//
// A description carries one P_Key and the index it was read from
// (EndpointInfo::keys); the P_Key table itself is not published. So the value
// rules judge the published P_Keys, and when a side applies another index
// (a dump's plan) the P_Key it really uses cannot be known: that is an error
// of its own (pkey-index-not-published), and the value rules are not judged on
// published values nobody uses; they say they could not check that side.
#include <optional>
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

bool Known(uint16_t pkey) { return (pkey & kPkeyPartitionMask) != 0; }
bool FullMember(uint16_t pkey) { return (pkey & kPkeyFullMember) != 0; }

std::string PkeyText(uint16_t pkey) {
  return Hex(pkey, 4) + (FullMember(pkey) ? " (full)" : " (limited)");
}

// What `x` published: "P_Key 0x8001 (full) at index 1".
std::string Published(const SideView& x) {
  const Keys& k = x.ep->keys;
  return (Known(k.pkey) ? "P_Key " + PkeyText(k.pkey) : std::string("no P_Key")) + " at index " +
         Dec(k.pkey_index);
}

// pkey-index-not-published: each QP of `x` applies the published index.
// Returns true when some QP applies another one (its P_Key is then unknown).
bool CheckAppliedIndex(const SideView& x, FindingSink& sink) {
  // A derived plan applies the published index by construction (plan.h).
  if (x.plan_derived) return false;
  const Keys& k = x.ep->keys;
  const std::string who = std::string("the ") + x.name;
  std::optional<size_t> first;
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const uint16_t applied = qps[i].pkey_index;
    if (applied == k.pkey_index) continue;
    if (!first) first = i;
    std::string message = who + " QP applies pkey_index " + Dec(applied) + " but the " + x.name +
                          " side published " + Published(x) + ": the P_Key at index " +
                          Dec(applied) + " is not in the descriptions";
    if (Known(k.pkey)) {
      message += ", and unless it is of partition " + Hex(k.pkey & kPkeyPartitionMask, 4) +
                 " every packet is dropped";
    }
    sink.Add(Rule::kPkeyIndexNotPublished, x,
             {.qp = i,
              .x_value = "applied " + Dec(applied) + ", published " + Dec(k.pkey_index),
              .message = std::move(message),
              .fix = "apply the published pkey_index (" + Dec(k.pkey_index) +
                     ") at INIT, or publish the index the QPs use with its P_Key "
                     "(ibv_query_pkey); a P_Key index hard-coded to 0 is the usual cause"});
  }
  if (!first) return false;
  const std::string what =
      who + " QPs apply pkey_index " + Dec(qps[*first].pkey_index) +
      (qps.size() > 1 ? " (first at QP " + Dec(*first) + ")" : "") +
      ", whose P_Key the descriptions do not give (published: " + Published(x) + ")";
  sink.Unchecked(Rule::kPkeyMismatch, x.dir, what, "pkey_index");
  sink.Unchecked(Rule::kPkeyNoFullMember, x.dir, what, "pkey_index");
  return true;
}

}  // namespace

void CheckPkeyRules(const Context& ctx, FindingSink& sink) {
  // Both sides are checked (no short-circuit): each reports its own QPs.
  const bool local_unknown = CheckAppliedIndex(ctx.local, sink);
  const bool remote_unknown = CheckAppliedIndex(ctx.remote, sink);
  if (local_unknown || remote_unknown) return;  // the notes above say why
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
