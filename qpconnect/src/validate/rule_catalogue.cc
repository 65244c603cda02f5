// SPDX-License-Identifier: MIT
// The rule catalogue: id and metadata of every validator rule, in the order of
// the Rule enumeration (rules.h). docs/rules.md is generated from this table
// (`qp-validate --list-rules --markdown`); a unit test keeps the two in step.
//
// Sources: "seed" is the matching-rule list for UD/UC/RC (shared/seeds/002);
// "IBA" is the InfiniBand Architecture Specification vol. 1 (cited by chapter;
// annexes A16/A17 are RoCE and RoCE v2); man pages are rdma-core's; peer issues
// are from docs/peers.md ("What users trip over").
#include <array>
#include <string_view>

#include "rules.h"

namespace qpconnect {
namespace validate_internal {
namespace {

constexpr TransportSet kRcUc{Transport::kRc, Transport::kUc};
constexpr TransportSet kRcOnly{Transport::kRc};
constexpr TransportSet kUdOnly{Transport::kUd};
constexpr TransportSet kAll = kAllTransports;

constexpr Severity E = Severity::kError;
constexpr Severity W = Severity::kWarning;

// A catalogue entry tagged with its enumerator, so the order can be checked.
struct Entry {
  Rule rule;
  RuleInfo info;
};

constexpr std::array<Entry, kRuleCount> kEntries = {{
    // ---- rules_local.cc: each side against its own port and device; the pair's shape.
    {Rule::kTransportMismatch,
     {"transport-mismatch", E, kAll, "qp_type", "local",
      "Both sides use the same transport (RC, UC or UD).",
      "RC/UC: the QP drops packets of another service type; RC ends in IBV_WC_RETRY_EXC_ERR.",
      "seed (the rules are per transport); IBA ch. 9 (transport layer: the BTH opcode "
      "carries the service type)"}},
    {Rule::kLinkLayerMismatch,
     {"link-layer-mismatch", E, kAll, "link_layer", "local",
      "Both ports have the same link layer (InfiniBand or Ethernet/RoCE).",
      "No path exists: retry exceeded (RC) or silent drop; GRH/LID rules cannot all be met.",
      "ibv_query_port(3) (link_layer); IBA annex A16 (RoCE)"}},
    {Rule::kPortNotActive,
     {"port-not-active", E, kAll, "port_state", "local", "The port the QPs use is ACTIVE.",
      "ibv_modify_qp to RTR/RTS may succeed, but nothing is sent or received; or EINVAL.",
      "ibv_query_port(3) (state); IBA ch. 7 (link states)"}},
    {Rule::kLidZero,
     {"lid-zero", E, kAll, "lid", "local",
      "An InfiniBand port has a LID (non-zero): a subnet manager has configured it.",
      "No SM running: LID 0 is not routable; the peer's dlid is 0 and RTR or the traffic fails.",
      "ibv_rc_pingpong (LID 0 is an error unless Ethernet); IBA ch. 4 (LIDs assigned by the SM)"}},
    {Rule::kPlanEndpointMismatch,
     {"plan-endpoint-mismatch", E, kAll, "qp_num", "local",
      "The attributes a side applies belong to the endpoint it published: same transport, same "
      "port, one entry per published QP, the same QP numbers in the same order.",
      "The peer connects to QPs or ports that are not the ones configured: silent drop, retry "
      "exceeded.",
      "qpconnect plan contract (plan.h)"}},
    {Rule::kRetryCntOutOfRange,
     {"retry-cnt-out-of-range", E, kRcOnly, "retry_cnt", "local",
      "retry_cnt is 0..7 (3-bit field).",
      "EINVAL at RTS where the provider checks; elsewhere the value is cut to 3 bits (8 becomes "
      "0: no retransmission at all).",
      "ibv_modify_qp(3); IBA ch. 11 (Modify QP)"}},
    {Rule::kRnrRetryOutOfRange,
     {"rnr-retry-out-of-range", E, kRcOnly, "rnr_retry", "local",
      "rnr_retry is 0..7 (7 = retry forever).",
      "EINVAL at RTS where the provider checks; elsewhere the value is cut to 3 bits (8 becomes "
      "0: the first RNR NAK is fatal).",
      "ibv_modify_qp(3); IBA ch. 11 (Modify QP)"}},
    {Rule::kTimeoutOutOfRange,
     {"timeout-out-of-range", E, kRcOnly, "timeout", "local",
      "The local ACK timeout exponent is 0..31 (4.096 us * 2^timeout).",
      "EINVAL at RTS where the provider checks; elsewhere the value is cut to 5 bits and the "
      "timeout is not the one intended.",
      "ibv_modify_qp(3); IBA ch. 9.7 (ack timeout)"}},
    {Rule::kMinRnrTimerOutOfRange,
     {"min-rnr-timer-out-of-range", E, kRcOnly, "min_rnr_timer", "local",
      "min_rnr_timer is a 5-bit code, 0..31.",
      "EINVAL at RTR where the provider checks; elsewhere the code is cut to 5 bits (32 becomes "
      "0: 655 ms per RNR NAK).",
      "ibv_modify_qp(3); IBA ch. 9.7 (RNR NAK timer encoding)"}},
    {Rule::kRnrRetryZero,
     {"rnr-retry-zero", W, kRcOnly, "rnr_retry", "local",
      "rnr_retry is not 0 (0 means the first RNR NAK is fatal).",
      "IBV_WC_RNR_RETRY_EXC_ERR as soon as the peer is briefly without posted receives.",
      "ibv_modify_qp(3); peers: meta-pytorch/torchcomms PR 3345, ydb-platform/nbs#5790"}},
    {Rule::kTimeoutInfinite,
     {"timeout-infinite", W, kRcOnly, "timeout", "local",
      "timeout is not 0 (0 disables the transport timer).",
      "A lost peer or packet is never detected: sends hang forever instead of completing with "
      "IBV_WC_RETRY_EXC_ERR.",
      "ibv_modify_qp(3) (timeout 0 = infinite)"}},
    {Rule::kMinRnrTimerZero,
     {"min-rnr-timer-zero", W, kRcOnly, "min_rnr_timer", "local",
      "min_rnr_timer is not 0 (code 0 means the longest delay, 655.36 ms).",
      "Each RNR NAK stalls the sender for 655 ms: throughput collapses when receives run short.",
      "ibv_modify_qp(3); IBA ch. 9.7 (RNR timer table); peers: torchcomms PR 3345"}},
    // ---- rules_pkey.cc
    {Rule::kPkeyMismatch,
     {"pkey-mismatch", E, kAll, "pkey", "pkey",
      "The P_Key values of the two sides' pkey_index entries have the same partition (low 15 "
      "bits; the membership bit aside). The value matters, not the index.",
      "Silent drop of every packet (P_Key violation counter rises); RC ends in retry exceeded.",
      "seed (all transports); IBA ch. 10.9 (partitioning); peers: NVIDIA/nvshmem#82, "
      "NVIDIA/nccl#1323 (P_Key index hard-coded to 0)"}},
    {Rule::kPkeyNoFullMember,
     {"pkey-no-full-member", E, kAll, "pkey", "pkey",
      "At least one of the two P_Keys is a full member (bit 15 set).",
      "Two limited members cannot talk: silent drop, RC retry exceeded.",
      "seed (all transports); IBA ch. 10.9 (partition membership)"}},
    {Rule::kPkeyIndexNotPublished,
     {"pkey-index-not-published", E, kAll, "pkey_index", "pkey",
      "The pkey_index a side applies (ibv_modify_qp to INIT, as its dump records it) is the "
      "index whose P_Key it published. The descriptions give the P_Key at that index only: "
      "what another index holds is unknown, so the P_Key rules are then unchecked for that "
      "side (an info note says so).",
      "The QP sends and accepts packets with the P_Key at the index it applied, not the one the "
      "peer was told of: where that is another partition (index 0 usually holds the default "
      "0xffff), every packet is dropped, the P_Key violation counters rise and RC ends in retry "
      "exceeded.",
      "ibv_modify_qp(3) (pkey_index at INIT); IBA ch. 10.9 (partitioning); peers: "
      "NVIDIA/nvshmem#82, NVIDIA/nccl#1323 (P_Key index hard-coded to 0)"}},
    // ---- rules_psn_qpn.cc
    {Rule::kQpListEmpty,
     {"qp-list-empty", E, kAll, "qps", "psn_qpn", "A side publishes at least one QP.",
      "Nothing to connect; the exchange was incomplete.", "qpconnect endpoint model (endpoint.h)"}},
    {Rule::kQpCountMismatch,
     {"qp-count-mismatch", W, kAll, "qps", "psn_qpn",
      "Both sides publish the same number of QPs (entry i connects to the peer's entry i).",
      "Only min(N, M) QPs are connected; the rest stay in INIT and their traffic goes nowhere.",
      "qpconnect plan contract (plan.h)"}},
    {Rule::kQpnOutOfRange,
     {"qpn-out-of-range", E, kAll, "qp_num", "psn_qpn",
      "QP numbers (published, and dest_qp_num) fit in 24 bits.",
      "The top byte is lost on the wire: packets reach another QP or none (silent drop, retry "
      "exceeded); some providers refuse RTR with EINVAL.",
      "IBA ch. 9.2 (BTH DestQP is 24 bits); ibv_modify_qp(3)"}},
    {Rule::kQpnReserved,
     {"qpn-reserved", E, kAll, "qp_num", "psn_qpn",
      "Neither a published QPN nor dest_qp_num is 0 or 1 (the SMI and GSI QPs).",
      "Packets go to the subnet/general management QP and are dropped; usually a sign of a "
      "zeroed or mis-parsed record.",
      "IBA ch. 3 (QP0/QP1 are the special QPs)"}},
    {Rule::kQpnDuplicate,
     {"qpn-duplicate", E, kAll, "qp_num", "psn_qpn", "A side's published QP numbers are distinct.",
      "Two peer QPs target the same QP: its PSN sequence breaks, RC retry exceeded.",
      "IBA ch. 9 (a QPN names one QP)"}},
    {Rule::kPsnOutOfRange,
     {"psn-out-of-range", E, kAll, "sq_psn", "psn_qpn",
      "PSNs (published, sq_psn, rq_psn) fit in 24 bits.",
      "The top byte is dropped: the peer's expected PSN differs, packets are discarded as out of "
      "sequence.",
      "IBA ch. 9.2 (BTH PSN is 24 bits); ibv_modify_qp(3)"}},
    {Rule::kQpnMismatch,
     {"qpn-mismatch", E, kAll, "dest_qp_num", "psn_qpn",
      "dest_qp_num(X) == qp_num(Y) for each QP pair (UD: the remote_qpn of send WRs).",
      "Packets reach another QP or none: RC retry exceeded (IBV_WC_RETRY_EXC_ERR), UC/UD silent "
      "drop.",
      "seed (UD remote_qpn, UC/RC dest_qp_num); ibv_modify_qp(3), ibv_post_send(3)"}},
    {Rule::kPsnMismatch,
     {"psn-mismatch", E, kRcUc, "rq_psn", "psn_qpn",
      "rq_psn(X) == sq_psn(Y) for each QP pair (Y's plan, i.e. the PSN it published).",
      "RC: the responder NAKs or drops every packet as out of sequence, the sender ends in "
      "IBV_WC_RETRY_EXC_ERR; UC: messages silently dropped.",
      "seed (UC, RC); IBA ch. 9.7 (PSN checks of the reliable service)"}},
    // ---- rules_mtu.cc
    {Rule::kMtuInvalid,
     {"mtu-invalid", E, kRcUc, "path_mtu", "mtu", "path_mtu is one of 256, 512, 1024, 2048, 4096.",
      "ibv_modify_qp to RTR fails with EINVAL.", "ibv_modify_qp(3) (enum ibv_mtu)"}},
    {Rule::kMtuMismatch,
     {"mtu-mismatch", E, kRcUc, "path_mtu", "mtu", "path_mtu(X) == path_mtu(Y).",
      "Packets larger than the receiver's path MTU are dropped: RC remote invalid request / local "
      "length errors or hangs, UC silent loss.",
      "seed (UC, RC); peers: kvcache-ai/Mooncake#3868, NVIDIA/nccl PR 2135"}},
    {Rule::kMtuAboveActive,
     {"mtu-above-active", E, kRcUc, "path_mtu", "mtu",
      "path_mtu(X) is not above the active MTU of X's own port.",
      "EINVAL at RTR on providers that check it against the port; otherwise packets the link "
      "cannot carry are dropped.",
      "ibv_query_port(3) (active_mtu); ibv_modify_qp(3)"}},
    {Rule::kMtuAbovePeerActive,
     {"mtu-above-peer-active", E, kRcUc, "path_mtu", "mtu",
      "path_mtu(X) is not above the active MTU of the peer's port.",
      "The peer's port drops the oversized packets: retry exceeded (RC), silent loss (UC).",
      "ibv_query_port(3) (active_mtu); perftest and NCCL use min(local, remote)"}},
    {Rule::kUdMessageExceedsMtu,
     {"ud-message-exceeds-mtu", E, kUdOnly, "message_size", "mtu",
      "A UD message fits the path MTU (the smaller active MTU of the two ports).",
      "ibv_post_send fails or the send completes with an error; UD does not segment.",
      "ibv_ud_pingpong (size <= active MTU); IBA ch. 9 (the UD service carries a message in one "
      "packet)"}},
    // ---- rules_rd_atomic.cc
    {Rule::kRdAtomicExceedsPeer,
     {"rd-atomic-exceeds-peer", E, kRcOnly, "max_rd_atomic", "rd_atomic",
      "max_rd_atomic(X) <= max_dest_rd_atomic(Y).",
      "The responder runs out of read/atomic resources: IBV_WC_REM_INV_REQ_ERR and the QP moves "
      "to the error state.",
      "seed (RC); ibv_modify_qp(3); peers: perftest#114"}},
    {Rule::kRdAtomicExceedsDevice,
     {"rd-atomic-exceeds-device", E, kRcOnly, "max_rd_atomic", "rd_atomic",
      "max_rd_atomic(X) <= X's device max_qp_init_rd_atom.",
      "ibv_modify_qp to RTS fails with EINVAL (mixed HCAs: a value taken from the peer).",
      "ibv_query_device(3); peers: perftest#114"}},
    {Rule::kDestRdAtomicExceedsDevice,
     {"dest-rd-atomic-exceeds-device", E, kRcOnly, "max_dest_rd_atomic", "rd_atomic",
      "max_dest_rd_atomic(X) <= X's device max_qp_rd_atom.",
      "ibv_modify_qp to RTR fails with EINVAL.", "ibv_query_device(3); ibv_modify_qp(3)"}},
    // ---- rules_address.cc
    {Rule::kAhPortMismatch,
     {"ah-port-mismatch", E, kAll, "port_num", "address",
      "ah_attr.port_num(X) == port_num(X): the address vector uses the QP's port.",
      "EINVAL at RTR (or ibv_create_ah for UD), or traffic leaves through another port.",
      "seed (all transports); ibv_modify_qp(3), ibv_create_ah(3)"}},
    {Rule::kDlidNotPeerLid,
     {"dlid-not-peer-lid", E, kAll, "dlid", "address",
      "On InfiniBand, ah_attr.dlid(X) is a LID of Y's port: base LID .. base LID + 2^LMC - 1 "
      "(not checked when the GRH routes to another subnet: the dlid is then a router's).",
      "Packets are delivered to another port or dropped by the switches: retry exceeded (RC), "
      "silent drop (UC/UD).",
      "seed (all transports); IBA ch. 4 (LIDs and LMC); ibv_create_ah(3)"}},
    {Rule::kSlidNotPeerDlid,
     {"slid-not-peer-dlid", E, kRcUc, "src_path_bits", "address",
      "Y's dlid equals X's source LID: X's base LID with its low LMC bits set to "
      "ah_attr.src_path_bits(X). (The seed writes \"port_num(X) + src_path_bits(X) must equal "
      "dlid(Y)\"; the IB meaning is SLID = base LID | src_path_bits within the LMC range.)",
      "The responder's packets carry a DLID that is X's but not the SLID X uses, so the "
      "connected QP's path check fails: packets dropped, retry exceeded.",
      "seed (UC, RC), read with IBA ch. 4 (LMC path bits) and ibv_modify_qp(3) (src_path_bits)"}},
    {Rule::kSrcPathBitsAboveLmc,
     {"src-path-bits-above-lmc", W, kAll, "src_path_bits", "address",
      "src_path_bits(X) has no bit at or above X's LMC.",
      "The hardware ignores the extra bits: the SLID is not the one intended, so the peer's dlid "
      "may not match it.",
      "ibv_modify_qp(3) (src_path_bits: low LMC bits of the LID); IBA ch. 4 (LMC)"}},
    {Rule::kUdMulticastDestination,
     {"ud-multicast-destination", W, kUdOnly, "dlid", "address",
      "A UD address handle targets a multicast DLID (0xC000-0xFFFE) or GID (ff00::/8); Y must "
      "have attached to the group, which an endpoint description cannot show.",
      "Without ibv_attach_mcast on the receiver, multicast datagrams are silently dropped.",
      "seed (UD multicast); ibv_attach_mcast(3)"}},
    {Rule::kSgidIndexNotInTable,
     {"sgid-index-not-in-table", E, kAll, "sgid_index", "address",
      "With a GRH, sgid_index(X) names a valid entry of X's GID table.",
      "EINVAL at RTR or ibv_create_ah.",
      "ibv_modify_qp(3), ibv_query_gid(3); peers: SymbioticLab/Justitia#3"}},
    {Rule::kSgidIndexTooLarge,
     {"sgid-index-too-large", E, kAll, "sgid_index", "address",
      "With a GRH, sgid_index(X) is at most 255: ibv_global_route.sgid_index is 8 bits wide, "
      "while RoCE GID tables can hold more entries (rxe: 1024).",
      "A larger index is truncated to its low 8 bits and silently selects another GID, or one "
      "that is not there: EINVAL at RTR, or packets from the wrong address.",
      "ibv_modify_qp(3) (struct ibv_global_route: uint8_t sgid_index); ibv_query_port(3) "
      "gid_tbl_len"}},
    {Rule::kSgidZero,
     {"sgid-zero", E, kAll, "sgid_index", "address",
      "The GID at sgid_index(X) is not all zeros (an unpopulated table slot).",
      "EINVAL at RTR, or packets from an unroutable source: hangs.",
      "ibv_query_gid(3); peers: SoftRoCE/rxe-dev#47 (-g 0 after the link-local GID disappears)"}},
    {Rule::kDgidZero,
     {"dgid-zero", E, kAll, "dgid", "address",
      "With a GRH, dgid(X) is not all zeros (the peer sent no GID, e.g. pingpong without -g).",
      "RoCE: EINVAL at RTR or nothing arrives; IB: dropped at the peer.",
      "ibv_rc_pingpong (GID zeros without -g); ibv_modify_qp(3)"}},
    {Rule::kDgidNotInPeerTable,
     {"dgid-not-in-peer-table", E, kAll, "dgid", "address",
      "With a GRH, dgid(X) is in Y's GID table (the port Y's QPs use).",
      "The peer drops every packet (DGID not its own): retry exceeded (RC), silent drop.",
      "seed (all transports); peers: perftest#44, openucx/ucx#7785, ofiwg/libfabric#12673 (GID "
      "index or table layout differs between hosts)"}},
    {Rule::kLinkLocalAcrossSubnets,
     {"link-local-across-subnets", E, kAll, "dgid", "address",
      "A link-local GID (fe80::/10) is not paired with a non-link-local one: a link-local source "
      "or destination cannot reach another subnet.",
      "Routers do not forward link-local traffic: \"Connection timed out\" at modify, retry "
      "exceeded.",
      "IBA ch. 8 (GRH, link-local scope); RFC 4291; peers: NVIDIA/nccl#769"}},
    {Rule::kHopLimitTooLow,
     {"hop-limit-too-low", W, kAll, "hop_limit", "address",
      "With a GRH towards another subnet (different IB/IPv6 prefix or IPv4 /24), hop_limit(X) is "
      "above 1.",
      "The first router drops the packet: retry exceeded.",
      "IBA ch. 8 (GRH HopLmt); ibv_rc_pingpong uses 1; peers: tenstorrent/tt-umd PR 3284"}},
    {Rule::kFlowLabelOutOfRange,
     {"flow-label-out-of-range", E, kAll, "flow_label", "address",
      "With a GRH, flow_label(X) fits in 20 bits (0..0xFFFFF).",
      "EINVAL at RTR or ibv_create_ah, or the label is truncated.",
      "IBA ch. 8 (GRH FlowLabel, 20 bits); RFC 6437; ibv_modify_qp(3)"}},
    // ---- rules_roce.cc
    {Rule::kGrhRequired,
     {"grh-required", E, kAll, "is_global", "roce",
      "On an Ethernet (RoCE) port, or a port flagged GRH_REQUIRED, the address vector has a GRH "
      "(is_global = 1).",
      "EINVAL at RTR (or ibv_create_ah): RoCE has no LID routing.",
      "IBA annex A16 (RoCE: GRH always present); ibv_query_port(3) (IBV_QPF_GRH_REQUIRED); "
      "peers: efficient/rdma_bench#4, perftest#393"}},
    {Rule::kDlidOnEthernet,
     {"dlid-on-ethernet", W, kAll, "dlid", "roce",
      "On an Ethernet port the dlid is 0: LIDs do not exist on RoCE.",
      "The dlid is ignored; a non-zero value shows the peer was addressed by LID (an IB habit), "
      "so the GID may be wrong too.",
      "IBA annex A16 (RoCE addressing uses GIDs)"}},
    {Rule::kGidTypeMismatch,
     {"gid-type-mismatch", E, kAll, "sgid_index", "roce",
      "Both sides send from GIDs of the same RoCE version (v1 and v1, or v2 and v2).",
      "RoCE v1 frames (ethertype 0x8915) and v2 packets (UDP 4791) do not meet: \"transport "
      "retry counter exceeded\".",
      "IBA annexes A16/A17; peers: kvcache-ai/Mooncake PR 113, perftest#44"}},
    {Rule::kGidFamilyMismatch,
     {"gid-family-mismatch", E, kAll, "sgid_index", "roce",
      "With RoCE v2 both sides' GIDs are of one address family: both IPv4-mapped (::ffff:a.b.c.d) "
      "or both IPv6.",
      "The packet cannot be built or routed: IBV_WC_RETRY_EXC_ERR or EINVAL at RTR.",
      "IBA annex A17 (RoCE v2 IP headers); peers: uccl-project/uccl PR 803, "
      "kvcache-ai/Mooncake#1593"}},
    {Rule::kTrafficClassMismatch,
     {"traffic-class-mismatch", W, kAll, "traffic_class", "roce",
      "On RoCE, both sides use the same GRH traffic class (DSCP/ECN byte), so that requests and "
      "their responses travel in the same priority class.",
      "On a fabric with lossless (PFC) classes, one direction rides a lossy class: drops, retries "
      "and latency spikes under load, not at connect time.",
      "IBA Annex A17 (RoCE v2 traffic class to DSCP); NVIDIA RoCE QoS guides (DSCP-based PFC); "
      "peers: NCCL_IB_TC, UCX_IB_TRAFFIC_CLASS"}},
    // ---- rules_qkey.cc
    {Rule::kQkeyMismatch,
     {"qkey-mismatch", E, kUdOnly, "qkey", "qkey",
      "The Q_Key X puts in its send WRs (remote_qkey, else its QP's qkey) equals Y's QP qkey.",
      "The receiver silently drops the datagrams (Q_Key violation).",
      "seed (UD); IBA ch. 10.2 (Q_Keys); ibv_post_send(3) (remote_qkey)"}},
    {Rule::kQkeyControlled,
     {"qkey-controlled", W, kUdOnly, "qkey", "qkey",
      "The Q_Key does not have bit 31 set (a controlled Q_Key).",
      "Setting it needs privilege (EPERM at INIT for unprivileged processes); as a remote_qkey "
      "the QP's own Q_Key is sent instead.",
      "IBA ch. 10.2 (controlled Q_Keys); ibv_post_send(3)"}},
    // ---- rules_sa.cc: the local plan against the SA's PathRecord (given when asked).
    {Rule::kMtuAboveSaPath,
     {"mtu-above-sa-path", E, kRcUc, "path_mtu", "sa",
      "The path_mtu is no larger than the MTU of the SA's PathRecord to the peer (the smallest "
      "MTU of every link on the path, not only of the two end ports).",
      "Packets larger than a link between the switches are dropped: RC retries until "
      "IBV_WC_RETRY_EXC_ERR, UC loses the messages, with both end ports healthy.",
      "IBA ch. 15.2.5.16 (PathRecord MTU); ibv_modify_qp(3) (path_mtu); peer issue: MTU not "
      "agreed"}},
    {Rule::kSlNotSaPath,
     {"sl-not-sa-path", W, kAll, "ah_attr.sl", "sa",
      "The address vector's SL is the SL of the SA's PathRecord.",
      "The subnet manager's routing (LASH, DFSSSP, torus-2QoS use SLs to avoid credit loops) and "
      "QoS policy assume that SL: another may deadlock the fabric under load, land on the wrong "
      "VL, or be dropped where the SL maps to VL15.",
      "IBA ch. 15.2.5.16 (PathRecord SL), ch. 7.6.6 (SL to VL mapping); OpenSM QoS and routing "
      "engines; peer issue: SL 0 or an environment variable"}},
    {Rule::kPkeyNotSaPath,
     {"pkey-not-sa-path", E, kAll, "pkey_index", "sa",
      "The P_Key the QP uses is the partition of the SA's PathRecord.",
      "Packets in another partition are dropped by the peer's or a switch's P_Key check "
      "(silent drop, retry exceeded), and the peer's port counts P_Key violations.",
      "IBA ch. 10.9 (partitioning), ch. 15.2.5.16 (PathRecord P_Key); peer issue: P_Key index "
      "0"}},
    {Rule::kGrhMissingAcrossRouters,
     {"grh-missing-across-routers", E, kAll, "ah_attr.is_global", "sa",
      "When the SA's PathRecord has a hop limit above 1 (the path crosses IB routers), the "
      "address vector carries a GRH with at least that hop limit.",
      "Without a GRH (or with hop limit 1) a router cannot forward the packet: silent drop, "
      "retry exceeded.",
      "IBA ch. 15.2.5.16 (PathRecord HopLimit), ch. 8.3 (GRH); peer issue: hop limit 1 across "
      "routers"}},
    // ---- rules_path.cc: the kernel's facts on the local RoCE path, read before RTR.
    {Rule::kRouteMissing,
     {"route-missing", E, kAll, "dgid", "path",
      "The kernel has a route from the local GID's netdev to the peer's address: a lookup bound "
      "to that netdev, from the GID's address (as ib_core and rxe make it), matches a unicast "
      "route. Without one the kernel assumes the peer on the netdev's link.",
      "ibv_modify_qp to RTR fails with ETIMEDOUT (no neighbour answers for an address that is "
      "not on the link), or RTR succeeds and every send ends in IBV_WC_RETRY_EXC_ERR.",
      "RoCE v2 is routed IP (IBA annex A17); Linux ip_route_output_key (the bound-netdev "
      "fallback), ib_core addr_resolve; peer issues: 'transport retry counter exceeded' with no "
      "root cause (UCX 5732, NCCL 1170)"}},
    {Rule::kRouteOtherNetdev,
     {"route-other-netdev", E, kAll, "dgid", "path",
      "The route to the peer's address leaves through the local GID's netdev (not through "
      "another netdev, and not through lo because the address is local).",
      "RoCE packets go out of a netdev without the RDMA device, or to lo, where rxe drops "
      "them: retry exceeded with both ports ACTIVE.",
      "ib_core and rxe bind the route to the GID's netdev (rxe_find_route4/6); Soft-RoCE lab "
      "notes (two addresses of one kernel)"}},
    {Rule::kNeighbourFailed,
     {"neighbour-failed", E, kAll, "dgid", "path",
      "The kernel's neighbour entry for the next hop (the peer, or the gateway) is not FAILED: "
      "its MAC could be resolved.",
      "ibv_modify_qp to RTR fails with ETIMEDOUT after the kernel's ARP or neighbour "
      "discovery got no answer; no reason is given.",
      "Linux neighbour states (NUD_FAILED); ib_core rdma_addr_find_l2_eth_by_grh; peer issues: "
      "ETIMEDOUT at RTR with no reason (nvshmem 42, Mooncake 204)"}},
    {Rule::kNeighbourMacMismatch,
     {"neighbour-mac-mismatch", E, kAll, "dgid", "path",
      "On a link without a gateway, the MAC in the kernel's neighbour entry for the peer's "
      "address is the MAC the peer publishes for the netdev of its GID.",
      "RTR succeeds, but every packet goes to the wrong MAC: RC ends in IBV_WC_RETRY_EXC_ERR "
      "(or no completion at all), UC and UD lose every message.",
      "Linux neighbour table (a stale or wrong permanent entry after a NIC swap); issue 31 "
      "(measured in the Soft-RoCE lab)"}},
    {Rule::kVlanMismatch,
     {"vlan-mismatch", E, kAll, "sgid_index", "path",
      "On a link without a gateway, the netdevs of both GIDs are on the same VLAN (the same "
      "802.1Q id, or both untagged).",
      "Frames tagged for one VLAN never reach the other: RTR fails with ETIMEDOUT resolving the "
      "neighbour, or retry exceeded.",
      "IEEE 802.1Q; RoCE GIDs of a VLAN netdev carry its tag (ib_core gid_attr ndev)"}},
    {Rule::kMtuAboveNetdev,
     {"mtu-above-netdev", E, kRcUc, "path_mtu", "path",
      "The path MTU plus the kernel's RoCE header allowance (96 bytes) fits the MTU of the local "
      "GID's netdev and of the route (its mtu metric), as read right before RTR. (UD sends one "
      "packet per message: ud-message-exceeds-mtu judges it.)",
      "Full-size packets are larger than the netdev sends: they are dropped, RC ends in "
      "IBV_WC_RETRY_EXC_ERR once a message exceeds the netdev MTU, small messages still pass.",
      "ib_addr.h iboe_get_mtu (the port's active MTU from the netdev MTU); ibv_modify_qp(3) "
      "(path_mtu); peer issue: MTU not agreed"}},
}};

constexpr std::array<RuleInfo, kRuleCount> Project(const std::array<Entry, kRuleCount>& entries) {
  std::array<RuleInfo, kRuleCount> out{};
  for (size_t i = 0; i < entries.size(); ++i) out[i] = entries[i].info;
  return out;
}

// Entry i is Rule i, and ids are distinct.
constexpr bool WellFormed() {
  for (size_t i = 0; i < kEntries.size(); ++i) {
    if (static_cast<size_t>(kEntries[i].rule) != i) return false;
    for (size_t j = i + 1; j < kEntries.size(); ++j) {
      if (kEntries[i].info.id == kEntries[j].info.id) return false;
    }
  }
  return true;
}
static_assert(WellFormed(), "catalogue must follow the Rule order with unique ids");

constexpr std::array<RuleInfo, kRuleCount> kRules = Project(kEntries);

}  // namespace

const RuleInfo& Meta(Rule rule) { return kRules[static_cast<size_t>(rule)]; }

}  // namespace validate_internal

std::span<const RuleInfo> RuleCatalogue() { return validate_internal::kRules; }

const RuleInfo* FindRule(std::string_view id) {
  for (const RuleInfo& r : validate_internal::kRules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

}  // namespace qpconnect
