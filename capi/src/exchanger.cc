// SPDX-License-Identifier: MIT
// The C API's exchangers: TCP, and the operations every exchanger has
// (exchange of JSON descriptions, barrier, abort). The byte channel is in
// channel.cc.
#include <cstring>
#include <string>

#include "internal.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/tcp.h"

namespace qpconnect::capi {

Result<ExchangerSettings> SettingsFrom(const char* function, const qpc_exchanger_options* options) {
  ExchangerSettings s;
  if (options == nullptr) return s;
  if (options->max_payload_bytes != 0) s.max_payload_bytes = options->max_payload_bytes;
  const bool has_bytes = options->psk != nullptr || options->psk_len != 0;
  const bool has_file = options->psk_file != nullptr && options->psk_file[0] != '\0';
  if (has_bytes && has_file) {
    return Invalid(function, "options",
                   "give the PSK as bytes (psk) or as a file (psk_file), not both");
  }
  if (has_bytes) {
    if (options->psk == nullptr)
      return Invalid(function, "options.psk", "psk is NULL but psk_len is not 0");
    auto key = oob::Psk::FromBytes(
        std::string_view(static_cast<const char*>(options->psk), options->psk_len));
    if (!key) return std::move(key).error();
    s.psk = std::move(*key);
  } else if (has_file) {
    auto key = oob::LoadPsk(options->psk_file);
    if (!key) return std::move(key).error();
    s.psk = std::move(*key);
  }
  return s;
}

Result<void> Emit(qpc_exchanger** out, std::unique_ptr<Exchanger> impl, uint16_t tcp_port) {
  auto handle = std::make_unique<qpc_exchanger>();
  handle->impl = std::move(impl);
  handle->tcp_port = tcp_port;
  *out = handle.release();
  return Ok();
}

}  // namespace qpconnect::capi

using namespace qpconnect;        // NOLINT: the C entry points below
using namespace qpconnect::capi;  // NOLINT

extern "C" {

void qpc_exchanger_options_init(qpc_exchanger_options* options) {
  if (options == nullptr) return;
  *options = qpc_exchanger_options{};
}

qpc_status qpc_exchanger_tcp_server(const char* bind_address, uint16_t port,
                                    const qpc_exchanger_options* options, qpc_exchanger** out,
                                    qpc_error** error) {
  static constexpr const char* kFn = "qpc_exchanger_tcp_server";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (out == nullptr) return NullArgument(kFn, "out");
    auto s = SettingsFrom(kFn, options);
    if (!s) return std::move(s).error();
    oob::TcpServerOptions o;
    if (bind_address != nullptr) o.bind_address = bind_address;
    o.port = port;
    o.psk = std::move(s->psk);
    o.max_payload_bytes = s->max_payload_bytes;
    auto x = oob::TcpExchanger::CreateServer(std::move(o));
    if (!x) return std::move(x).error();
    const uint16_t bound = (*x)->port();
    return Emit(out, std::move(*x), bound);
  });
}

qpc_status qpc_exchanger_tcp_client(const char* host, uint16_t port,
                                    const qpc_exchanger_options* options, qpc_exchanger** out,
                                    qpc_error** error) {
  static constexpr const char* kFn = "qpc_exchanger_tcp_client";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (out == nullptr) return NullArgument(kFn, "out");
    if (host == nullptr) return NullArgument(kFn, "host");
    auto s = SettingsFrom(kFn, options);
    if (!s) return std::move(s).error();
    oob::TcpClientOptions o;
    o.host = host;
    o.port = port;
    o.psk = std::move(s->psk);
    o.max_payload_bytes = s->max_payload_bytes;
    auto x = oob::TcpExchanger::CreateClient(std::move(o));
    if (!x) return std::move(x).error();
    return Emit(out, std::move(*x), port);
  });
}

uint16_t qpc_exchanger_tcp_port(const qpc_exchanger* exchanger) {
  return exchanger == nullptr ? 0 : exchanger->tcp_port;
}

qpc_status qpc_exchanger_exchange_json(qpc_exchanger* exchanger, const char* local_json,
                                       int timeout_ms, char** remote_json, qpc_error** error) {
  static constexpr const char* kFn = "qpc_exchanger_exchange_json";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (exchanger == nullptr) return NullArgument(kFn, "exchanger");
    if (local_json == nullptr) return NullArgument(kFn, "local_json");
    if (remote_json == nullptr) return NullArgument(kFn, "remote_json");
    auto local = oob::DecodeJson(local_json);
    if (!local) {
      Error e = std::move(local).error();
      e.operation = std::string(kFn) + ": decode local_json";
      return e;
    }
    auto remote = exchanger->impl->Exchange(*local, Millis(timeout_ms));
    if (!remote) return std::move(remote).error();
    auto text = DupString(oob::EncodeJson(*remote));
    if (!text) return std::move(text).error();
    *remote_json = *text;
    return Ok();
  });
}

qpc_status qpc_exchanger_barrier(qpc_exchanger* exchanger, const char* stage, int timeout_ms,
                                 qpc_error** error) {
  static constexpr const char* kFn = "qpc_exchanger_barrier";
  return Boundary(kFn, error, [&]() -> Result<void> {
    if (exchanger == nullptr) return NullArgument(kFn, "exchanger");
    if (stage == nullptr) return NullArgument(kFn, "stage");
    return exchanger->impl->Barrier(stage, Millis(timeout_ms));
  });
}

void qpc_exchanger_abort(qpc_exchanger* exchanger, const char* reason, int timeout_ms) {
  if (exchanger == nullptr || reason == nullptr) return;
  (void)Boundary("qpc_exchanger_abort", nullptr, [&]() -> Result<void> {
    exchanger->impl->Abort(reason, Millis(timeout_ms));
    return Ok();
  });
}

void qpc_exchanger_cancel(qpc_exchanger* exchanger, const char* reason) {
  if (exchanger == nullptr || reason == nullptr) return;
  (void)Boundary("qpc_exchanger_cancel", nullptr, [&]() -> Result<void> {
    exchanger->impl->Cancel(reason);
    return Ok();
  });
}

void qpc_exchanger_free(qpc_exchanger* exchanger) {
  (void)Boundary("qpc_exchanger_free", nullptr, [&]() -> Result<void> {
    delete exchanger;
    return Ok();
  });
}

}  // extern "C"
