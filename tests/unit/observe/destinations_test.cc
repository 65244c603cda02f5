// SPDX-License-Identifier: MIT
// Destinations of live QPs (issue 41): the kernel's rdma_cm ids (netlink
// RDMA_NLDEV_CMD_RES_CM_ID_GET, over messages built with libmnl) attached to
// their QPs, turned into destination GIDs where the host identity shows the
// port's addresses are its GIDs, kept in the snapshot file and used by
// pairing; and mlx5's raw QP context decoded, over contexts built field by
// field from the layout of the kernel's include/linux/mlx5/mlx5_ifc.h with a
// bit writer of this test's own (not the decoder's table).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/socket.h>
#include <netinet/in.h>
#include <rdma/rdma_netlink.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "qpconnect/observe/cm_id.h"
#include "qpconnect/observe/netlink.h"
#include "qpconnect/observe/pairing.h"
#include "qpconnect/observe/raw_qp.h"
#include "qpconnect/observe/snapshot.h"
#include "qpconnect/observe/snapshot_json.h"

namespace qpconnect {
namespace {

using kernel::ParseCmIdMessage;
using kernel::ParseQpRawMessage;

Gid G(const char* text) { return *GidFromString(text); }

struct Message {
  std::vector<char> buf = std::vector<char>(16384);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
};

// A __kernel_sockaddr_storage (128 bytes) holding an IPv4 or IPv6 address.
std::vector<uint8_t> Storage(const char* address, uint16_t port) {
  std::vector<uint8_t> s(128, 0);
  if (std::strchr(address, ':') == nullptr) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    inet_pton(AF_INET, address, &sin.sin_addr);
    std::memcpy(s.data(), &sin, sizeof sin);
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    inet_pton(AF_INET6, address, &sin6.sin6_addr);
    std::memcpy(s.data(), &sin6, sizeof sin6);
  }
  return s;
}

void PutCmId(nlmsghdr* nlh, uint32_t lqpn, uint32_t pid, uint8_t state,
             const std::vector<uint8_t>& src, const std::vector<uint8_t>& dst) {
  nlattr* entry = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  if (lqpn != 0) {
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, lqpn);
    mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, 2);
  }
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PS, 0x0106);  // RDMA_PS_TCP
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, state);
  if (!src.empty()) mnl_attr_put(nlh, RDMA_NLDEV_ATTR_RES_SRC_ADDR, src.size(), src.data());
  if (!dst.empty()) mnl_attr_put(nlh, RDMA_NLDEV_ATTR_RES_DST_ADDR, dst.size(), dst.data());
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_CM_IDN, lqpn + 100);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, pid);
  mnl_attr_nest_end(nlh, entry);
}

TEST(NetlinkParse, CmIdMessageGivesQpNumberStateAndAddresses) {
  Message m;
  mnl_attr_put_u32(m.nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  mnl_attr_put_strz(m.nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  nlattr* table = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_CM_ID);
  PutCmId(m.nlh, 0, 900, 8, Storage("10.99.0.1", 7174), {});  // the listener: no QP
  PutCmId(m.nlh, 17, 900, 5, Storage("10.99.0.1", 7174), Storage("10.99.0.2", 41000));
  PutCmId(m.nlh, 18, 901, 5, Storage("fe80::1", 7471), Storage("fe80::2", 7471));
  mnl_attr_nest_end(m.nlh, table);
  std::vector<KernelCmId> ids;
  ParseCmIdMessage(m.nlh, &ids);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0].lqpn, 0u);
  EXPECT_EQ(ids[0].state, "LISTEN");
  EXPECT_EQ(ids[0].src_addr, "10.99.0.1:7174");
  EXPECT_EQ(ids[0].dst_addr, "");
  EXPECT_EQ(ids[1].device, "rxe0");
  EXPECT_EQ(ids[1].lqpn, 17u);
  EXPECT_EQ(ids[1].pid, 900);
  EXPECT_EQ(ids[1].state, "CONNECT");
  EXPECT_EQ(ids[1].dst_addr, "10.99.0.2:41000");
  EXPECT_EQ(ids[2].src_addr, "[fe80::1]:7471");
  EXPECT_EQ(ids[2].dst_addr, "[fe80::2]:7471");
}

TEST(NetlinkParse, SockaddrOfOtherFamiliesOrTooShortIsNoAddress) {
  std::vector<uint8_t> ib(128, 0);
  const uint16_t af_ib = 27;  // AF_IB: family, pkey, flowinfo, then the GID
  std::memcpy(ib.data(), &af_ib, 2);
  const Gid gid = G("fe80::2:c903:0:1");
  std::memcpy(ib.data() + 8, gid.data(), 16);
  EXPECT_EQ(SockaddrText(ib.data(), ib.size()), "[fe80::2:c903:0:1]");
  std::vector<uint8_t> unix_family(128, 0);
  unix_family[0] = AF_UNIX;
  EXPECT_EQ(SockaddrText(unix_family.data(), unix_family.size()), "");
  const std::vector<uint8_t> v4 = Storage("10.0.0.1", 1);
  EXPECT_EQ(SockaddrText(v4.data(), 4), "");  // shorter than a sockaddr_in
  EXPECT_EQ(GidOfAddressText("10.99.0.2:41000"), G("::ffff:10.99.0.2"));
  EXPECT_EQ(GidOfAddressText("[fe80::2]:7471"), G("fe80::2"));
  EXPECT_EQ(GidOfAddressText("[fe80::2:c903:0:1]"), G("fe80::2:c903:0:1"));
  EXPECT_FALSE(GidOfAddressText("node7:80"));
  EXPECT_FALSE(GidOfAddressText(""));
}

KernelQp Rc(const std::string& dev, uint32_t lqpn, uint32_t rqpn, int pid) {
  KernelQp q;
  q.device = dev;
  q.port = 1;
  q.lqpn = lqpn;
  q.rqpn = rqpn;
  q.sq_psn = 100;
  q.rq_psn = 200;
  q.type = "RC";
  q.state = "RTS";
  q.pid = pid;
  q.comm = "rping";
  return q;
}

TEST(SnapshotDestination, CmIdsAttachToTheirQpsByDeviceNumberAndPid) {
  std::vector<KernelQp> qps = {Rc("rxe0", 17, 18, 900), Rc("rxe1", 17, 5, 901),
                               Rc("rxe0", 19, 20, 902)};
  std::vector<KernelCmId> ids = {
      {"rxe0", 17, 900, "CONNECT", "10.99.0.1:7174", "10.99.0.2:41000"},
      {"rxe0", 0, 900, "LISTEN", "10.99.0.1:7174", ""},
  };
  AttachCmIds(ids, qps);
  EXPECT_EQ(qps[0].src_addr, "10.99.0.1:7174");
  EXPECT_EQ(qps[0].dst_addr, "10.99.0.2:41000");
  EXPECT_EQ(qps[1].dst_addr, "");  // the same number on another device
  EXPECT_EQ(qps[2].dst_addr, "");
}

Snapshot Host(const std::string& host, const std::string& dev, const char* ip_gid,
              std::vector<KernelQp> qps) {
  Snapshot s;
  s.host = host;
  PortIdentity id;
  id.device = dev;
  id.port = 1;
  id.link_layer = "Ethernet";
  id.gids = {G("fe80::5054:ff:fe00:1"), G(ip_gid)};
  s.identity = {id};
  KernelSample a;
  a.qps = std::move(qps);
  s.samples = {a};
  return s;
}

TEST(SnapshotDestination, CmIdDestinationIsTheGidWhereThePortsAddressesAreGids) {
  KernelQp q = Rc("rxe1", 17, 18, 901);
  q.src_addr = "10.99.0.2:41000";
  q.dst_addr = "10.99.0.1:7174";
  Observation o;
  AddSnapshot(Host("b", "rxe1", "::ffff:10.99.0.2", {q}), "b.json", &o);
  ASSERT_EQ(o.qps.size(), 1u);
  EXPECT_EQ(o.qps[0].dest_gid, G("::ffff:10.99.0.1"));

  // InfiniBand (IPoIB): the source address is not among the port's GIDs.
  q.src_addr = "192.168.7.2:41000";
  q.dst_addr = "192.168.7.1:7174";
  Observation ib;
  AddSnapshot(Host("b", "rxe1", "fe80::2:c903:0:1", {q}), "b.json", &ib);
  EXPECT_FALSE(ib.qps[0].dest_gid);
  // No identity: not known, not guessed.
  Snapshot bare = Host("b", "rxe1", "::ffff:10.99.0.2", {q});
  bare.identity.clear();
  Observation none;
  AddSnapshot(bare, "b.json", &none);
  EXPECT_FALSE(none.qps[0].dest_gid);
  // A UD QP's cm_id names no one peer.
  KernelQp ud = Rc("rxe1", 17, 18, 901);
  ud.type = "UD";
  ud.src_addr = "10.99.0.2:41000";
  ud.dst_addr = "10.99.0.1:7174";
  Observation u;
  AddSnapshot(Host("b", "rxe1", "::ffff:10.99.0.2", {ud}), "b.json", &u);
  EXPECT_FALSE(u.qps[0].dest_gid);
  // A dgid from the QP context comes first.
  KernelQp both = Rc("rxe1", 17, 18, 901);
  both.src_addr = "10.99.0.2:41000";
  both.dst_addr = "10.99.0.1:7174";
  both.dgid = G("::ffff:10.99.0.9");
  Observation c;
  AddSnapshot(Host("b", "rxe1", "::ffff:10.99.0.2", {both}), "b.json", &c);
  EXPECT_EQ(c.qps[0].dest_gid, G("::ffff:10.99.0.9"));
}

// Two hosts whose QP numbers are the same both ways: without destinations
// the QP numbers cannot tell which of host c's QP 17 is host a's peer.
Observation TwoWay(bool with_cm_ids) {
  auto qp = [&](uint32_t lqpn, uint32_t rqpn, const char* src, const char* dst) {
    KernelQp q = Rc("rxe0", lqpn, rqpn, 900);
    q.sq_psn.reset();
    q.rq_psn.reset();
    if (with_cm_ids) {
      q.src_addr = src;
      q.dst_addr = dst;
    }
    return q;
  };
  Observation o;
  AddSnapshot(Host("a", "rxe0", "::ffff:10.0.0.1", {qp(17, 18, "10.0.0.1:7174", "10.0.0.2:5")}),
              "a.json", &o);
  AddSnapshot(Host("b", "rxe0", "::ffff:10.0.0.2", {qp(18, 17, "10.0.0.2:5", "10.0.0.1:7174")}),
              "b.json", &o);
  AddSnapshot(Host("c", "rxe0", "::ffff:10.0.0.3", {qp(18, 17, "10.0.0.3:5", "10.0.0.4:7174")}),
              "c.json", &o);
  AddSnapshot(Host("d", "rxe0", "::ffff:10.0.0.4", {qp(17, 18, "10.0.0.4:7174", "10.0.0.3:5")}),
              "d.json", &o);
  return o;
}

TEST(SnapshotDestination, CmIdDestinationsPairWhatQpNumbersCannot) {
  const Observation o = TwoWay(true);
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 2u);
  for (const ObservedPair& pair : p.pairs) {
    EXPECT_NE(pair.how.find("gid"), std::string::npos) << pair.how;
    const std::string hosts = o.qps[pair.a].host + o.qps[pair.b].host;
    EXPECT_TRUE(hosts == "ab" || hosts == "cd") << hosts;
  }
  EXPECT_TRUE(p.ambiguous.empty());

  const Pairing without = PairObservedQps(TwoWay(false));
  EXPECT_TRUE(without.pairs.empty());
  EXPECT_EQ(without.ambiguous.size(), 4u);
}

TEST(SnapshotDestination, AddressesSurviveTheSnapshotFileBothReaders) {
  KernelQp q = Rc("rxe1", 17, 18, 901);
  q.src_addr = "10.99.0.2:41000";
  q.dst_addr = "[fe80::1]:7174";
  Snapshot s = Host("b", "rxe1", "::ffff:10.99.0.2", {q});
  const std::string text = SnapshotToText(s);
  EXPECT_NE(text.find("\"src_addr\":\"10.99.0.2:41000\",\"dst_addr\":\"[fe80::1]:7174\""),
            std::string::npos)
      << text;
  Result<Snapshot> fast = SnapshotFromJson(text);
  ASSERT_TRUE(fast) << fast.error().ToString();
  EXPECT_EQ(fast->samples[0].qps[0].src_addr, "10.99.0.2:41000");
  EXPECT_EQ(fast->samples[0].qps[0].dst_addr, "[fe80::1]:7174");
  // An escape in a string sends the file through the JSON tree reader.
  s.samples[0].qps[0].comm = "r\"ping";
  Result<Snapshot> tree = SnapshotFromJson(SnapshotToText(s));
  ASSERT_TRUE(tree) << tree.error().ToString();
  EXPECT_EQ(tree->samples[0].qps[0].comm, "r\"ping");
  EXPECT_EQ(tree->samples[0].qps[0].dst_addr, "[fe80::1]:7174");
  // A QP without a cm_id writes neither member.
  EXPECT_EQ(SnapshotToText(Host("b", "rxe1", "::1", {Rc("rxe1", 1, 2, 3)})).find("_addr"),
            std::string::npos);
}

// ---- mlx5's raw QP context -------------------------------------------------
//
// The test's own bit writer and positions, read off mlx5_ifc.h (bit offsets
// from the most significant bit of each structure's first big-endian dword):
//   resource_dump_segment_header: length_dw [0x00,16), segment_type [0x10,16)
//   resource_dump_resource_segment: header, reserved [0x20,32), index1
//     [0x40,32), index2 [0x60,32), payload from 0x80
//   query_qp_out: status [0x00,8), syndrome [0x20,32), reserved [0x40,64),
//     opt_param_mask [0x80,32), ece [0xa0,32), qpc from 0xc0
//   qpc: state [0x00,4), ..., reserved [0xa0,3), log_page_size [0xa3,5),
//     remote_qpn [0xa8,24), primary_address_path (ads) from 0xc0
//   ads: fl, free_ar, reserved, pkey_index [0x10,16); reserved [0x20,8),
//     grh [0x28,1), mlid [0x29,7), rlid [0x30,16); ...; rgid_rip from 0x80
//     (16 bytes)
class Bits {
 public:
  explicit Bits(size_t bytes) : b_(bytes, 0) {}
  void Set(size_t bit, size_t width, uint32_t value) {
    for (size_t k = 0; k < width; ++k) {
      const size_t i = bit + k;
      const uint8_t mask = static_cast<uint8_t>(0x80u >> (i % 8));
      if ((value >> (width - 1 - k)) & 1u) {
        b_[i / 8] |= mask;
      } else {
        b_[i / 8] &= static_cast<uint8_t>(~mask);
      }
    }
  }
  void Bytes(size_t bit, const Gid& g) {
    for (size_t k = 0; k < g.size(); ++k) b_[bit / 8 + k] = g[k];
  }
  std::vector<uint8_t>& data() { return b_; }

 private:
  std::vector<uint8_t> b_;
};

constexpr size_t kCommandSegmentBytes = 20;                  // header + 4 dwords
constexpr size_t kResourceSegmentBytes = 16 + 0x100 + 0x40;  // header..index2, query_qp_out
constexpr size_t kPayloadBit = (kCommandSegmentBytes + 16) * 8;
constexpr size_t kQpcBit = kPayloadBit + 0xc0;
constexpr size_t kPathBit = kQpcBit + 0xc0;

// A dump as the firmware gives it: a command segment, the QP's resource
// segment, a terminate segment.
std::vector<uint8_t> Mlx5Dump(uint32_t qpn, uint32_t remote_qpn, bool grh, uint16_t rlid,
                              const Gid& rgid, uint8_t status = 0) {
  Bits b(kCommandSegmentBytes + kResourceSegmentBytes + 4);
  b.Set(0, 16, kCommandSegmentBytes / 4);
  b.Set(16, 16, 0xfffa);  // command
  b.Set(0x40, 32, qpn);   // its index1 too: not the QP's context
  const size_t res = kCommandSegmentBytes * 8;
  b.Set(res, 16, kResourceSegmentBytes / 4);
  b.Set(res + 16, 16, 0x1200);  // a resource segment's type (PRM_QUERY_QP's number varies)
  b.Set(res + 0x40, 32, qpn);
  b.Set(kPayloadBit, 8, status);
  b.Set(kQpcBit + 0x00, 4, 3);  // state
  b.Set(kQpcBit + 0xa3, 5, 7);  // log_page_size, next to remote_qpn
  b.Set(kQpcBit + 0xa8, 24, remote_qpn);
  b.Set(kPathBit + 0x10, 16, 0xffff);  // pkey_index, next to the fields read
  b.Set(kPathBit + 0x28, 1, grh ? 1 : 0);
  b.Set(kPathBit + 0x29, 7, 0x7f);  // mlid
  b.Set(kPathBit + 0x30, 16, rlid);
  b.Bytes(kPathBit + 0x80, rgid);
  const size_t end = (kCommandSegmentBytes + kResourceSegmentBytes) * 8;
  b.Set(end, 16, 1);
  b.Set(end + 16, 16, 0xfffb);  // terminate
  return b.data();
}

TEST(NetlinkRawQp, Mlx5ContextBuiltFromTheLayoutDecodes) {
  const Gid rgid = G("::ffff:192.168.10.2");
  const std::vector<uint8_t> raw = Mlx5Dump(0x1a2b3c, 0xabcdef, true, 0, rgid);
  std::optional<RawQpDestination> d = DecodeMlx5QpRaw(raw);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->lqpn, 0x1a2b3cu);
  EXPECT_EQ(d->remote_qpn, 0xabcdefu);
  EXPECT_EQ(d->rgid, rgid);
  EXPECT_EQ(d->rlid, 0);

  // InfiniBand without a GRH: the LID, no GID.
  d = DecodeMlx5QpRaw(Mlx5Dump(0x48, 0x49, false, 0x1234, G("fe80::9")));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rlid, 0x1234);
  EXPECT_FALSE(d->rgid);
}

TEST(NetlinkRawQp, Mlx5RefusesWhatIsNotAQpContext) {
  std::vector<uint8_t> raw = Mlx5Dump(0x48, 0x49, true, 0, G("fe80::9"));
  EXPECT_FALSE(DecodeMlx5QpRaw(Mlx5Dump(0x48, 0x49, true, 0, G("fe80::9"), 0x05)));  // status
  std::vector<uint8_t> cut(raw.begin(), raw.begin() + kCommandSegmentBytes + 100);
  EXPECT_FALSE(DecodeMlx5QpRaw(cut));  // the resource segment runs past the end
  EXPECT_FALSE(DecodeMlx5QpRaw({}));
  std::vector<uint8_t> only_command(raw.begin(), raw.begin() + kCommandSegmentBytes);
  EXPECT_FALSE(DecodeMlx5QpRaw(only_command));
}

TEST(NetlinkRawQp, DriverTableAndTheTrackersRqpnCheck) {
  ASSERT_NE(FindRawQpDriver("mlx5_core"), nullptr);
  EXPECT_EQ(FindRawQpDriver("mlx5_core")->decode, &DecodeMlx5QpRaw);
  EXPECT_EQ(FindRawQpDriver("rdma_rxe"), nullptr);
  EXPECT_EQ(FindRawQpDriver(""), nullptr);

  RawQpDestination d;
  d.lqpn = 0x48;
  d.remote_qpn = 0x49;
  d.rgid = G("fe80::9");
  KernelQp q = Rc("mlx5_0", 0x48, 0x49, 1);
  ASSERT_TRUE(ApplyRawDestination(d, &q));
  EXPECT_EQ(q.dgid, G("fe80::9"));
  EXPECT_FALSE(q.dlid);
  KernelQp other = Rc("mlx5_0", 0x48, 0x50, 1);  // the tracker says another peer
  EXPECT_FALSE(ApplyRawDestination(d, &other));
  EXPECT_FALSE(other.dgid);
}

TEST(NetlinkRawQp, RawQpMessageEntriesAreDecodedByTheDriversDecoder) {
  Message m;
  mnl_attr_put_u32(m.nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  mnl_attr_put_strz(m.nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  nlattr* table = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP);
  for (uint32_t qpn : {0x48u, 0x4au}) {
    const std::vector<uint8_t> raw = Mlx5Dump(qpn, qpn + 1, true, 0, G("fe80::9"));
    nlattr* entry = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
    mnl_attr_put(m.nlh, RDMA_NLDEV_ATTR_RES_RAW, raw.size(), raw.data());
    mnl_attr_nest_end(m.nlh, entry);
  }
  nlattr* empty = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  mnl_attr_nest_end(m.nlh, empty);
  mnl_attr_nest_end(m.nlh, table);
  std::vector<RawQpDestination> found;
  ParseQpRawMessage(m.nlh, DecodeMlx5QpRaw, &found);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].lqpn, 0x4au);
  EXPECT_EQ(found[1].remote_qpn, 0x4bu);
}

TEST(NetlinkRawQp, DriverOfADeviceFromSysfs) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("qpc_driver_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "bus/pci/drivers/mlx5_core");
  std::filesystem::create_directories(root / "devices/pci0000:00/0000:00:01.0");
  std::filesystem::create_directories(root / "class/infiniband/mlx5_0");
  std::filesystem::create_directories(root / "class/infiniband/rxe0");
  std::filesystem::create_directory_symlink(root / "devices/pci0000:00/0000:00:01.0",
                                            root / "class/infiniband/mlx5_0/device");
  std::filesystem::create_directory_symlink(root / "bus/pci/drivers/mlx5_core",
                                            root / "devices/pci0000:00/0000:00:01.0/driver");
  EXPECT_EQ(kernel::ReadSysfsDriver("mlx5_0", root.string()), "mlx5_core");
  EXPECT_EQ(kernel::ReadSysfsDriver("rxe0", root.string()), "");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace qpconnect
