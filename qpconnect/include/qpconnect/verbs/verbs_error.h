// SPDX-License-Identifier: MIT
// Turning libibverbs failures into qpconnect::Error.
//
// libibverbs has two conventions: creators (ibv_create_qp, ibv_open_device)
// return NULL and set errno; ibv_modify_qp, ibv_query_port and ibv_destroy_*
// return the errno value. VerbsError() handles both: a positive `rc` is the
// errno; otherwise errno is used, and EIO if errno is 0 too.
#pragma once

#include <string>

#include "qpconnect/result.h"

namespace qpconnect::verbs {

// REQUIRES: called right after the failing call, before anything can reset errno.
Error VerbsError(std::string operation, int rc = 0, std::string detail = {});

// Logs a failed destroy/dealloc from a deleter (which cannot return errors).
void LogDestroyFailure(const char* operation, int rc) noexcept;

}  // namespace qpconnect::verbs
