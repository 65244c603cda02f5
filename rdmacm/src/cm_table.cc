// SPDX-License-Identifier: MIT
#include "cm_table.h"

namespace qpconnect::rdmacm {

std::string_view CmInputName(CmInput in) {
  switch (in) {
    case CmInput::kBind:
      return "rdma_bind_addr";
    case CmInput::kResolveAddr:
      return "rdma_resolve_addr";
    case CmInput::kResolveRoute:
      return "rdma_resolve_route";
    case CmInput::kListen:
      return "rdma_listen";
    case CmInput::kConnect:
      return "rdma_connect";
    case CmInput::kAccept:
      return "rdma_accept";
    case CmInput::kAcceptUd:
      return "rdma_accept (UD)";
    case CmInput::kReject:
      return "rdma_reject";
    case CmInput::kDisconnect:
      return "rdma_disconnect";
    case CmInput::kDisconnectUd:
      return "rdma_disconnect (UD)";
    case CmInput::kEstablish:
      return "rdma_establish";
    case CmInput::kDestroy:
      return "rdma_destroy_id";
    case CmInput::kReq:
      return "REQ";
    case CmInput::kRep:
      return "REP";
    case CmInput::kRepNoQp:
      return "REP (no QP on the id)";
    case CmInput::kSidrRep:
      return "REP (UD: SIDR)";
    case CmInput::kRej:
      return "REJ";
    case CmInput::kRtu:
      return "RTU";
    case CmInput::kDreq:
      return "DREQ";
    case CmInput::kDrep:
      return "DREP";
    case CmInput::kMra:
      return "MRA";
    case CmInput::kLinkRefused:
      return "link refused";
    case CmInput::kLinkDropped:
      return "link dropped";
    case CmInput::kLinkTimedOut:
      return "link timed out";
    case CmInput::kLinkProtocol:
      return "link protocol error";
    case CmInput::kDeadline:
      return "deadline passed";
    case CmInput::kPeerTalking:
      return "deadline passed, peer talks";
    case CmInput::kBadDescription:
      return "description does not decode";
    case CmInput::kValidatorRefused:
      return "validator refused";
    case CmInput::kDeviceRefused:
      return "device refused";
  }
  return "?";
}

std::string_view CmActionName(CmAction a) {
  switch (a) {
    case CmAction::kNothing:
      return "Nothing";
    case CmAction::kLetGo:
      return "LetGo";
    case CmAction::kPostAddrResolved:
      return "PostAddrResolved";
    case CmAction::kPostRouteResolved:
      return "PostRouteResolved";
    case CmAction::kDialAndSendReq:
      return "DialAndSendReq";
    case CmAction::kPostConnectRequest:
      return "PostConnectRequest";
    case CmAction::kValidateMoveSendRep:
      return "ValidateMoveSendRep";
    case CmAction::kValidateSendSidrRep:
      return "ValidateSendSidrRep";
    case CmAction::kValidateMoveSendRtu:
      return "ValidateMoveSendRtu";
    case CmAction::kValidatePostResponse:
      return "ValidatePostResponse";
    case CmAction::kValidatePostSidrEstablished:
      return "ValidatePostSidrEstablished";
    case CmAction::kSendRtu:
      return "SendRtu";
    case CmAction::kPostEstablished:
      return "PostEstablished";
    case CmAction::kExtendDeadline:
      return "ExtendDeadline";
    case CmAction::kWaitOn:
      return "WaitOn";
    case CmAction::kSendMra:
      return "SendMra";
    case CmAction::kSendDreq:
      return "SendDreq";
    case CmAction::kQpToError:
      return "QpToError";
    case CmAction::kPostDisconnectedOnDreq:
      return "PostDisconnectedOnDreq";
    case CmAction::kSendDrepPostDisconnected:
      return "SendDrepPostDisconnected";
    case CmAction::kPostDisconnectedOnDrep:
      return "PostDisconnectedOnDrep";
    case CmAction::kPostDisconnected:
      return "PostDisconnected";
    case CmAction::kGiveUpOnDrep:
      return "GiveUpOnDrep";
    case CmAction::kSendDrepIfAsked:
      return "SendDrepIfAsked";
    case CmAction::kDestroySendDreq:
      return "DestroySendDreq";
    case CmAction::kDestroyRejectRequest:
      return "DestroyRejectRequest";
    case CmAction::kDestroySendDrepIfAsked:
      return "DestroySendDrepIfAsked";
    case CmAction::kRefuseGone:
      return "RefuseGone";
    case CmAction::kFailNoListener:
      return "FailNoListener";
    case CmAction::kFailTimedOut:
      return "FailTimedOut";
    case CmAction::kFailTimedOutQp:
      return "FailTimedOutQp";
    case CmAction::kFailProtocol:
      return "FailProtocol";
    case CmAction::kFailReset:
      return "FailReset";
    case CmAction::kFailResetQp:
      return "FailResetQp";
    case CmAction::kFailQuietly:
      return "FailQuietly";
    case CmAction::kFailPeerRejected:
      return "FailPeerRejected";
    case CmAction::kFailBadReply:
      return "FailBadReply";
    case CmAction::kFailValidator:
      return "FailValidator";
    case CmAction::kFailDeviceActive:
      return "FailDeviceActive";
    case CmAction::kFailDevicePassive:
      return "FailDevicePassive";
    case CmAction::kFailProgramReject:
      return "FailProgramReject";
  }
  return "?";
}

std::string_view CmActionText(CmAction a) {
  switch (a) {
    case CmAction::kNothing:
      return "nothing more";
    case CmAction::kLetGo:
      return "let go of the link";
    case CmAction::kPostAddrResolved:
      return "ADDR_RESOLVED";
    case CmAction::kPostRouteResolved:
      return "ROUTE_RESOLVED";
    case CmAction::kDialAndSendReq:
      return "describe, dial, REQ; the reply's deadline";
    case CmAction::kPostConnectRequest:
      return "CONNECT_REQUEST; MRAs while the program holds it";
    case CmAction::kValidateMoveSendRep:
      return "describe, validate, RTR, RTS, REP; the RTU's deadline";
    case CmAction::kValidateSendSidrRep:
      return "describe, validate, REP (SIDR); let go of the link";
    case CmAction::kValidateMoveSendRtu:
      return "validate, RTR, RTS, RTU, ESTABLISHED";
    case CmAction::kValidatePostResponse:
      return "validate, CONNECT_RESPONSE";
    case CmAction::kValidatePostSidrEstablished:
      return "validate, ESTABLISHED (param.ud); let go of the link";
    case CmAction::kSendRtu:
      return "RTU";
    case CmAction::kPostEstablished:
      return "ESTABLISHED";
    case CmAction::kExtendDeadline:
      return "the reply's deadline extended (up to 68.7 s)";
    case CmAction::kWaitOn:
      return "the deadline moved to the peer's silence";
    case CmAction::kSendMra:
      return "MRA (one per link per sweep)";
    case CmAction::kSendDreq:
      return "QP to ERROR, DREQ; the DREP's deadline (no link: DISCONNECTED)";
    case CmAction::kQpToError:
      return "QP to ERROR";
    case CmAction::kPostDisconnectedOnDreq:
      return "DISCONNECTED; the DREP waits for rdma_disconnect";
    case CmAction::kSendDrepPostDisconnected:
      return "DREP, DISCONNECTED, let go of the link";
    case CmAction::kPostDisconnectedOnDrep:
      return "DISCONNECTED, let go of the link";
    case CmAction::kPostDisconnected:
      return "DISCONNECTED";
    case CmAction::kGiveUpOnDrep:
      return "DISCONNECTED without the DREP, let go of the link";
    case CmAction::kSendDrepIfAsked:
      return "QP to ERROR; DREP if the peer asked, let go of the link";
    case CmAction::kDestroySendDreq:
      return "DREQ (RC), let go of the link";
    case CmAction::kDestroyRejectRequest:
      return "REJ 28, let go of the link";
    case CmAction::kDestroySendDrepIfAsked:
      return "DREP if the peer asked, let go of the link";
    case CmAction::kRefuseGone:
      return "the call fails: ECONNRESET";
    case CmAction::kFailNoListener:
      return "fail: REJECTED 8 (UD: UNREACHABLE 1)";
    case CmAction::kFailTimedOut:
      return "fail: UNREACHABLE -ETIMEDOUT";
    case CmAction::kFailTimedOutQp:
      return "fail: QP to ERROR, UNREACHABLE -ETIMEDOUT";
    case CmAction::kFailProtocol:
      return "fail: UNREACHABLE -EPROTO";
    case CmAction::kFailReset:
      return "fail: UNREACHABLE -ECONNRESET";
    case CmAction::kFailResetQp:
      return "fail: QP to ERROR, UNREACHABLE -ECONNRESET";
    case CmAction::kFailQuietly:
      return "fail: no event (rdma_accept says ECONNRESET)";
    case CmAction::kFailPeerRejected:
      return "fail: QP to ERROR, REJECTED with the REJ's reason (UD: UNREACHABLE 1 or 2)";
    case CmAction::kFailBadReply:
      return "fail: REJ 28, UNREACHABLE -EPROTO";
    case CmAction::kFailValidator:
      return "fail: REJ 28, REJECTED 28";
    case CmAction::kFailDeviceActive:
      return "fail: QP to ERROR, REJ 28, CONNECT_ERROR -errno";
    case CmAction::kFailDevicePassive:
      return "fail: QP to ERROR, REJ 28, rdma_accept fails with errno";
    case CmAction::kFailProgramReject:
      return "fail: REJ 28 (rdma_reject_ece: 35) with the program's private data";
  }
  return "?";
}

}  // namespace qpconnect::rdmacm
