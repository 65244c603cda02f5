// SPDX-License-Identifier: MIT
// One JSON shape for an observed QP (qpconnect/observe/observed.h), whichever source
// saw it: a qp-trace trace, a qp-inspect snapshot or a dump. qp-validate's
// trace and snapshot modes both print it (docs/json.md,
// docs/schemas/qp-validate.schema.json "observed_qp").
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "qpconnect/observe/observed.h"

namespace qpconnect::tools::qp_validate {

// file, source, host, pid, comm, device, port, qpn, transport ("rc", "uc",
// "ud", or the QP type in lower case), state, destroyed, creation_seen,
// dest_qpn (null if unknown), transitions (ibv_modify_qp calls seen, in
// order), and from the last kernel sample, if any: sq_psn, rq_psn (null if
// unknown), process_state and samples (their count).
nlohmann::ordered_json ObservedQpJson(const ObservedQp& q);

// The same object as compact JSON text appended to `out` (what
// ObservedQpJson(q).dump() writes, without the tree: a job's million QPs).
void AppendObservedQpJson(const ObservedQp& q, std::string* out);

}  // namespace qpconnect::tools::qp_validate
