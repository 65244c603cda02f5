// SPDX-License-Identifier: MIT
// The installed qpconnect::observe compiles and links for an embedding
// program: a trace read into the observed-QP model and judged, without a
// device or a kernel (the netlink reader is linked, not called).
#include <qpconnect/observe/netlink.h>
#include <qpconnect/observe/trace_judge.h>
#include <qpconnect/observe/trace_reader.h>

#include <iostream>

int main() {
  const char* trace =
      "{\"qp_trace\": 1, \"event\": \"start\", \"pid\": 7, \"comm\": \"app\", \"host\": \"h\"}\n";
  qpconnect::Observation obs;
  auto header = qpconnect::trace::ReadTrace(trace, "t.json", obs);
  const qpconnect::trace::Verdict v = qpconnect::trace::JudgeObservation(obs);
  auto* const make_reader = &qpconnect::kernel::MakeNetlinkReader;  // linked, not called
  std::cout << "trace of pid " << (header ? header->pid : -1) << ", " << v.pairs.size()
            << " pairs\n";
  return header && header->pid == 7 && v.pairs.empty() && make_reader != nullptr ? 0 : 1;
}
