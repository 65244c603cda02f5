// SPDX-License-Identifier: MIT
// Exit statuses shared by every qpconnect tool, with their one table of
// meanings (kExitStatuses: --help, the man pages and docs/cli.md),
// and the one map from a failed call's error to a status: which stage of a
// tool's work failed, and the error's code, decide it (kExitTable). No tool
// maps error codes to statuses itself.
// Thread-safety: constant data and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "qpconnect/result.h"

namespace qpconnect::tools {

enum ExitCode : int {
  kExitOk = 0,          // success
  kExitFindings = 1,    // qp-validate: the endpoints have errors
  kExitUsage = 2,       // bad option or argument, or unusable input file
  kExitNoDevice = 3,    // no RDMA device, or the named device/port does not exist
  kExitExchange = 4,    // the exchange with the peer(s) failed (also an MPI collective)
  kExitValidation = 5,  // qp-connect: the validator found errors before any modify
  kExitVerbs = 6,       // a verbs call failed (open, create, modify, ...), or a kernel query
  kExitTraffic = 7,     // verification traffic failed (completion error, mismatch)
  kExitNoPath = 8,     // qp-info --path, qp-connect --path sa: no path, or the partition refuses it
  kExitSa = 9,         // the same: no SM, the SA did not answer, or answered wrongly
  kExitPathLoss = 10,  // qp-connect: the proof's packets were lost on the path (named)
  kExitCannotRun = 126,  // qp-cm, qp-trace: PROGRAM cannot be run (as env(1))
  kExitNotFound = 127,   // qp-cm, qp-trace: PROGRAM not found (as env(1))
  kExitSigint = 130,     // qp-connect --serve: interrupted by SIGINT (128 + 2)
  kExitSigterm = 143,    // qp-connect --serve: interrupted by SIGTERM (128 + 15)
};

// One row of the exit-status table: the status and what it means, one line
// of at most 72 characters in plain ASCII (no quote or backslash), as every
// tool's --help prints it under "Exit status:" (ExitStatusHelp), help2man
// copies it into the man pages and docs/cli.md's table holds it; the test
// exit_codes_test checks all three against this table.
struct ExitStatusRow {
  ExitCode status;
  std::string_view meaning;
};

// Every status a qpconnect tool exits with, in order.
inline constexpr ExitStatusRow kExitStatuses[] = {
    {kExitOk, "success"},
    {kExitFindings, "the judged descriptions, traces or snapshots have errors"},
    {kExitUsage, "usage: a bad option or argument, or an unusable input the user named"},
    {kExitNoDevice, "no RDMA device, or the named device, port or GID does not exist"},
    {kExitExchange, "the exchange with the peer failed (channel, format, key, deadline, MPI)"},
    {kExitValidation, "the validator found errors before any ibv_modify_qp"},
    {kExitVerbs, "a verbs call or a kernel RDMA query failed"},
    {kExitTraffic, "the verification traffic failed (completion error, mismatch, deadline)"},
    {kExitNoPath, "the subnet administrator has no path to the destination in the P_Key"},
    {kExitSa, "no subnet manager, or the SA did not answer or answered with an error"},
    {kExitPathLoss, "the verification packets were lost on the path (counters say where)"},
    {kExitCannotRun, "PROGRAM was found but cannot be run"},
    {kExitNotFound, "PROGRAM was not found"},
    {kExitSigint, "interrupted by SIGINT (128 + 2)"},
    {kExitSigterm, "interrupted by SIGTERM (128 + 15)"},
};

// The meaning of `status` in kExitStatuses ("" for a status not in it).
std::string_view ExitMeaning(int status);

// A tool's "Exit status:" section of --help: the heading, then one line
// "  N    MEANING" per status of `used`, in the table's words.
std::string ExitStatusHelp(std::span<const ExitCode> used);

// The stage of a tool's work that failed: with the error's code, it decides
// the exit status.
enum class ExitStage {
  kInput,     // what the user named, checked before anything starts (a key, --dump, HOST)
  kOpen,      // opening the device, its port and the QPs (also reading the kernel's view)
  kChannel,   // setting up the out-of-band channel (bind, listen, a directory)
  kListen,    // the stock pingpong dialect's listener (--wire pingpong, tcp server)
  kExchange,  // the exchange of descriptions, and the pingpong dialect's records
  kValidate,  // the validator, or the plan, refused before any modify
  kConnect,   // INIT->RTR->RTS
  kBarrier,   // a barrier with the peer (after RTS, after the traffic)
  kTraffic,   // the verification traffic
  kKeyFile,   // --gen-psk: writing a fresh key file
  kPath,      // an SA PathRecord query (qp-info --path, qp-connect --path sa)
  kPathLoss,  // the verification traffic, its packets lost on the path (proof_failure.h)
  kWhole,     // a verdict over the whole run with no stage (qp-mesh's collective one)
};
inline constexpr size_t kExitStages = static_cast<size_t>(ExitStage::kWhole) + 1;
inline constexpr size_t kErrorCodes = static_cast<size_t>(ErrorCode::kTraffic) + 1;

using ExitRow = std::array<ExitCode, kErrorCodes>;

// A row with one status whatever the error's code.
constexpr ExitRow Uniform(ExitCode status) {
  ExitRow row{};
  row.fill(status);
  return row;
}

// Row: ExitStage; column: ErrorCode, in their declaration order. kPath's row
// is where the SA's attribute does not decide (see ExitStatus).
//
// Where a stage fixes the status whatever went wrong, its row is one status;
// opening and the pingpong listener keep a bad value (2), a missing thing (3)
// and a failed verbs call (6) apart. kWhole has no stage: a timeout there is
// the traffic's (qp-mesh's only deadline is its completion wait).
// clang-format off
inline constexpr std::array<ExitRow, kExitStages> kExitTable = {
    Uniform(kExitUsage),                                                              // kInput
    //      invalid-arg  not-found      timeout        protocol       incompatible     verbs          io             auth           traffic
    ExitRow{kExitUsage,  kExitNoDevice, kExitVerbs,    kExitVerbs,    kExitVerbs,      kExitVerbs,    kExitVerbs,    kExitVerbs,    kExitVerbs},     // kOpen
    ExitRow{kExitUsage,  kExitUsage,    kExitExchange, kExitExchange, kExitExchange,   kExitExchange, kExitExchange, kExitExchange, kExitExchange},  // kChannel
    ExitRow{kExitUsage,  kExitNoDevice, kExitExchange, kExitExchange, kExitExchange,   kExitVerbs,    kExitExchange, kExitExchange, kExitExchange},  // kListen
    Uniform(kExitExchange),                                                           // kExchange
    Uniform(kExitValidation),                                                         // kValidate
    Uniform(kExitVerbs),                                                              // kConnect
    Uniform(kExitExchange),                                                           // kBarrier
    Uniform(kExitTraffic),                                                            // kTraffic
    ExitRow{kExitUsage,  kExitUsage,    kExitUsage,    kExitUsage,    kExitUsage,      kExitUsage,    kExitExchange, kExitUsage,    kExitUsage},     // kKeyFile
    ExitRow{kExitUsage,  kExitSa,       kExitSa,       kExitSa,       kExitSa,         kExitSa,       kExitSa,       kExitSa,       kExitSa},        // kPath
    Uniform(kExitPathLoss),                                                           // kPathLoss
    ExitRow{kExitUsage,  kExitNoDevice, kExitTraffic,  kExitExchange, kExitValidation, kExitVerbs,    kExitExchange, kExitExchange, kExitTraffic},   // kWhole
};
// clang-format on

// The exit status for `e` failing `stage`: kExitTable's cell, except where
// the error says more than its code. In kOpen, buffers the host cannot
// allocate (operation "allocate buffers": no verbs call failed) are 2, the
// sizes asked being the fault. In kPath, the SA's answer decides first
// (qpconnect/sa/path_resolver.h's errors): the port ("port") is 3, no path (kNotFound "path") or a
// partition that refuses it (kIncompatible "pkey") is 8; a bad argument is 2, anything else 9 (no
// SM, the SA silent or answering wrongly, a umad failure, an Ethernet port).
int ExitStatus(ExitStage stage, const Error& e);

}  // namespace qpconnect::tools
