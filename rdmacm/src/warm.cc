#include "warm.h"

#include <boost/asio/post.hpp>
#include <mutex>

#include "link.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "wire.h"

namespace qpconnect::rdmacm {
namespace {

EndpointInfo MadeUp(uint8_t last) {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = e.port.max_mtu = Mtu::k1024;
  GidEntry g;
  g.index = 1;
  g.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, last};
  g.type = GidType::kRoceV2;
  g.family = GidFamily::kIpv4;
  e.path.use_grh = true;
  e.path.sgid = g;
  e.gid_table = {g};
  e.qps = {QpEntry{0x100u + last, 0x1000u + last, std::nullopt}};
  return e;
}

void Run() {
  EndpointInfo a = MadeUp(1), b = MadeUp(2);
  auto decoded = oob::DecodeBinary(oob::EncodeBinary(b));
  if (!decoded) return;
  ConnectionPlan plan = PlanConnection(a, *decoded);
  ValidationInput input;
  input.local = &a;
  input.remote = &*decoded;
  input.local_plan = plan;
  (void)Validate(input);
  (void)verbs::BuildRtr(Transport::kRc, plan.qps[0]);
  (void)verbs::BuildRts(Transport::kRc, plan.qps[0]);
  Message m;
  m.type = MsgType::kReq;
  m.endpoint = oob::EncodeBinary(a);
  std::string frame = EncodeFrame(m);
  (void)DecodeBody(std::string_view(frame).substr(4));
}

}  // namespace

void WarmUpOnce() {
  static std::once_flag once;
  std::call_once(once, [] { boost::asio::post(EngineIo(), Run); });
}

}  // namespace qpconnect::rdmacm
