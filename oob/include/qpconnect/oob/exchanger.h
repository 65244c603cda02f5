// SPDX-License-Identifier: MIT
// The exchanger interface, as seen from qpconnect::oob. The interface itself is
// declared in core (qpconnect/exchanger.h) so that the connector can drive any
// exchanger; this header keeps the oob spelling.
#pragma once

#include "qpconnect/exchanger.h"

namespace qpconnect::oob {

using Exchanger = ::qpconnect::Exchanger;

}  // namespace qpconnect::oob
