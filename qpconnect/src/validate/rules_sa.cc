// SPDX-License-Identifier: MIT
// Rules against the subnet administrator's view: mtu-above-sa-path (RC, UC),
// sl-not-sa-path, pkey-not-sa-path, grh-missing-across-routers (all
// transports). They judge the local plan against the PathRecord the SA gave
// for the local port to the remote one (ValidationInput::sa_path; issue 19,
// docs/ib-paths.md) and are silent when no PathRecord was asked for.
// Sources: IBA vol. 1 ch. 15.2.5.16 (PathRecord), 10.9 (partitions), 8.3 (GRH).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

std::string MtuBytesText(Mtu m) {
  const int b = MtuBytes(m);
  return b == 0 ? "invalid" : std::to_string(b);
}

}  // namespace

void CheckSaRules(const Context& ctx, FindingSink& sink) {
  if (ctx.sa_path == nullptr || !ctx.local.IsInfiniBand()) return;
  const PathRecord& sa = *ctx.sa_path;
  const SideView& x = ctx.local;
  const auto& qps = x.plan->qps;
  const uint16_t pkey = x.ep->keys.pkey;
  // The published P_Key is the one in use only if the QPs apply its index
  // (pkey-index-not-published reports the others).
  bool pkey_in_use_known = true;
  if (!x.plan_derived) {
    for (const QpAttrs& q : qps) pkey_in_use_known &= q.pkey_index == x.ep->keys.pkey_index;
  }
  if (!pkey_in_use_known) {
    sink.Unchecked(Rule::kPkeyNotSaPath, x.dir,
                   "the local QPs apply a pkey_index other than the published " +
                       Dec(x.ep->keys.pkey_index) + ": the P_Key they use is unknown",
                   "pkey_index");
  } else if ((pkey & 0x7fff) != 0 && (sa.pkey & 0x7fff) != 0 &&
             (pkey & 0x7fff) != (sa.pkey & 0x7fff)) {
    sink.Add(Rule::kPkeyNotSaPath, x,
             {.x_value = Hex(pkey, 4),
              .y_value = "SA " + Hex(sa.pkey, 4),
              .message = "the local QPs use P_Key " + Hex(pkey, 4) +
                         " but the SA's path to the "
                         "peer is in partition " +
                         Hex(sa.pkey, 4),
              .fix = "use the pkey_index of " + Hex(sa.pkey, 4) +
                     " in the local P_Key table, or ask the SA for a path in " + Hex(pkey, 4) +
                     " (qp-info --path DEST --pkey)"});
  }
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpAttrs& q = qps[i];
    if (ctx.Applies(Rule::kMtuAboveSaPath) && IsValidMtu(sa.mtu) && IsValidMtu(q.path_mtu) &&
        MtuBytes(q.path_mtu) > MtuBytes(sa.mtu)) {
      sink.Add(Rule::kMtuAboveSaPath, x,
               {.qp = i,
                .x_value = MtuBytesText(q.path_mtu),
                .y_value = "SA " + MtuBytesText(sa.mtu),
                .message = "the local path_mtu " + MtuBytesText(q.path_mtu) + " is above the MTU " +
                           MtuBytesText(sa.mtu) + " of the SA's path",
                .fix = "use path_mtu " + MtuBytesText(sa.mtu) + " or less (-m " +
                       MtuBytesText(sa.mtu) + ")"});
    }
    if (q.ah.sl != sa.sl) {
      sink.Add(Rule::kSlNotSaPath, x,
               {.qp = i,
                .x_value = std::to_string(q.ah.sl),
                .y_value = "SA " + std::to_string(sa.sl),
                .message = "the local address vector uses SL " + std::to_string(q.ah.sl) +
                           " but the SA's path has SL " + std::to_string(sa.sl),
                .fix = "use SL " + std::to_string(sa.sl) + " (the SA's)"});
    }
    if (sa.hop_limit > 1 && (!q.ah.is_global || q.ah.hop_limit < sa.hop_limit)) {
      sink.Add(Rule::kGrhMissingAcrossRouters, x,
               {.qp = i,
                .x_value = q.ah.is_global ? "GRH hop limit " + std::to_string(q.ah.hop_limit)
                                          : std::string("no GRH"),
                .y_value = "SA hop limit " + std::to_string(sa.hop_limit),
                .message = std::string("the SA's path crosses routers (hop limit ") +
                           std::to_string(sa.hop_limit) + ") but the local address vector " +
                           (q.ah.is_global ? "has hop limit " + std::to_string(q.ah.hop_limit)
                                           : std::string("has no GRH")),
                .fix = "set is_global with hop_limit " + std::to_string(sa.hop_limit) +
                       ", the flow label and traffic class of the SA's path"});
    }
  }
}

}  // namespace qpconnect::validate_internal
