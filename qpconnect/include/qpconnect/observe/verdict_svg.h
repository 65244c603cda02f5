// SPDX-License-Identifier: MIT
// The verdict as a picture: a host-by-host matrix in plain SVG text (no
// plotting library), one cell per pair of hosts that share a pair of QPs,
// colored by the worst verdict among their pairs: green sound, orange a
// warning, red an error. A QP whose peer was not observed but whose
// destination address names a host colors that host pair too. The culprits'
// hosts (JobSummary::stuck_hosts) stand out: their row and column are banded
// and outlined and their names are printed in red. Hosts are in name order;
// with more than 120 hosts only the culprits' hosts are labelled, and each
// row's runs of one color are drawn as one rectangle.
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include "qpconnect/observe/job_summary.h"
#include "qpconnect/observe/judge.h"

namespace qpconnect {

// A complete SVG document (UTF-8, with an XML declaration).
std::string VerdictMatrixSvg(const Observation& observation, const ObservationVerdict& verdict,
                             const JobSummary& summary);

}  // namespace qpconnect
