// SPDX-License-Identifier: MIT
// MadChannel over libibumad. The only file of qpconnect_sa that calls umad_*.
#include "qpconnect/sa/umad_channel.h"

#include <endian.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace qpconnect::sa {
namespace {

constexpr int kSaQp = 1;
constexpr int kQp1Qkey = static_cast<int>(0x80010000u);

// Owns a umad port descriptor and the agent registered on it.
class UmadChannel final : public MadChannel {
 public:
  UmadChannel(int fd, int agent, const SaPort& port) : fd_(fd), agent_(agent), port_(port) {}
  ~UmadChannel() override {
    if (agent_ >= 0) umad_unregister(fd_, agent_);
    if (fd_ >= 0) umad_close_port(fd_);
  }
  UmadChannel(const UmadChannel&) = delete;
  UmadChannel& operator=(const UmadChannel&) = delete;

  Result<void> Send(const std::array<uint8_t, kMadSize>& mad) override {
    std::vector<uint8_t> buf(umad_size() + kMadSize);
    std::memcpy(umad_get_mad(buf.data()), mad.data(), kMadSize);
    umad_set_addr(buf.data(), port_.sm_lid, kSaQp, port_.sm_sl, kQp1Qkey);
    umad_set_pkey(buf.data(), 0);
    // No kernel retries: the resolver retries with a fresh TID and bounds the
    // wait itself (umad2sim ignores the kernel's timeout anyway).
    const int rc = umad_send(fd_, agent_, buf.data(), static_cast<int>(kMadSize), 0, 0);
    if (rc < 0) {
      return ErrnoError(ErrorCode::kIo, -rc, "umad_send to SA LID " + std::to_string(port_.sm_lid));
    }
    return {};
  }

  Result<std::vector<uint8_t>> Receive(std::chrono::milliseconds timeout) override {
    std::vector<uint8_t> buf(umad_size() + 4096);
    while (true) {
      int length = static_cast<int>(buf.size() - umad_size());
      const int ms = static_cast<int>(std::max<int64_t>(timeout.count(), 0));
      const int rc = umad_recv(fd_, buf.data(), &length, ms);
      if (rc == -ENOSPC && length > 0 && static_cast<size_t>(length) < (1u << 20)) {
        buf.resize(umad_size() + static_cast<size_t>(length));  // an RMPP reassembly
        continue;
      }
      if (rc == -ETIMEDOUT) {
        return Error(ErrorCode::kTimeout, 0, "umad_recv", "", "no MAD within the try");
      }
      if (rc < 0) return ErrnoError(ErrorCode::kIo, -rc, "umad_recv");
      const int status = umad_status(buf.data());
      if (status == ETIMEDOUT) {
        return Error(ErrorCode::kTimeout, 0, "umad_recv", "", "the kernel timed the send out");
      }
      if (status != 0) return ErrnoError(ErrorCode::kIo, status, "umad_recv (MAD status)");
      const auto* mad = static_cast<const uint8_t*>(umad_get_mad(buf.data()));
      return std::vector<uint8_t>(mad, mad + length);
    }
  }

 private:
  int fd_;
  int agent_;
  SaPort port_;
};

LinkLayer ParseLinkLayer(const char* text) {
  if (std::strcmp(text, "InfiniBand") == 0 || std::strcmp(text, "IB") == 0) {
    return LinkLayer::kInfiniBand;
  }
  if (std::strcmp(text, "Ethernet") == 0) return LinkLayer::kEthernet;
  // Old kernels and umad2sim's simulated sysfs may leave it empty: IB then.
  return text[0] == '\0' ? LinkLayer::kInfiniBand : LinkLayer::kUnspecified;
}

}  // namespace

Result<SaPort> QueryUmadPort(const std::string& ca_name, uint8_t port_num) {
  umad_port_t p;
  std::memset(&p, 0, sizeof(p));
  const int rc = umad_get_port(ca_name.empty() ? nullptr : ca_name.c_str(), port_num, &p);
  if (rc < 0) {
    Error e = ErrnoError(
        ErrorCode::kNotFound, -rc, "umad_get_port",
        (ca_name.empty() ? std::string("no umad device (default CA)") : "no umad port " + ca_name) +
            (port_num != 0 ? " port " + std::to_string(port_num) : "") +
            "; is ib_umad loaded, or under ibsim LD_PRELOAD=libumad2sim.so set?");
    e.attribute = "port";
    return e;
  }
  SaPort port;
  port.ca_name = p.ca_name;
  port.port_num = static_cast<uint8_t>(p.portnum);
  port.lid = static_cast<uint16_t>(p.base_lid);
  port.lmc = static_cast<uint8_t>(p.lmc);
  port.sm_lid = static_cast<uint16_t>(p.sm_lid);
  port.sm_sl = static_cast<uint8_t>(p.sm_sl);
  port.state = static_cast<uint8_t>(p.state);
  const uint64_t prefix = be64toh(p.gid_prefix);
  const uint64_t guid = be64toh(p.port_guid);
  for (int i = 0; i < 8; ++i) {
    port.gid[static_cast<size_t>(i)] = static_cast<uint8_t>(prefix >> (56 - 8 * i));
    port.gid[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  }
  port.link_layer = ParseLinkLayer(p.link_layer);
  umad_release_port(&p);
  return port;
}

Result<std::unique_ptr<MadChannel>> OpenUmadChannel(const SaPort& port) {
  const int fd = umad_open_port(port.ca_name.c_str(), port.port_num);
  if (fd < 0) {
    return ErrnoError(ErrorCode::kIo, -fd,
                      "umad_open_port " + port.ca_name + " " + std::to_string(port.port_num),
                      "cannot open the umad device (permissions of /dev/infiniband/umad*?)");
  }
  const int agent = umad_register(fd, kMgmtClassSubnAdm, 2, 1, nullptr);
  if (agent < 0) {
    umad_close_port(fd);
    return ErrnoError(ErrorCode::kIo, -agent, "umad_register SubnAdm");
  }
  return std::unique_ptr<MadChannel>(new UmadChannel(fd, agent, port));
}

}  // namespace qpconnect::sa
