// SPDX-License-Identifier: MIT
// The snapshot file: a Snapshot (qpconnect/observe/snapshot.h) as JSON, written by
// `qp-inspect -o` and `qp-inspect --json`, read by `qp-validate`. The format
// is documented in docs/inspect.md ("The snapshot file"):
//
//   {"format": "qpconnect-snapshot", "version": 1, "tool": "...", "host": "...",
//    "taken_at": "2026-11-23T05:20:00Z", "interval_seconds": 1.0, "notes": [],
//    "samples": [{"at_seconds": 0.0,
//                 "qps": [{"device": "rxe0", "port": 1, "lqpn": 17, "rqpn": 17,
//                          "type": "RC", "state": "RTS", "sq_psn": 2680267,
//                          "rq_psn": 2681266, "path_mig_state": "MIGRATED",
//                          "pid": 811, "comm": "ibv_rc_pingpong",
//                          "process_state": "S", "dgid": "fe80::2", "dlid": 7}],
//                 "ports": [{"device": "rxe0", "port": 1,
//                            "counters": {"duplicate_request": 57, ...}}]}],
//    "paths": [{"device": "rxe1", "port": 1, "lqpn": 17, "pid": 812,
//               "source": "10.99.0.2", "destination": "10.99.0.1",
//               "peer": "rxe0 QP 17", "netdev": "veth1", "facts": "...",
//               "neighbour_address": "10.99.0.1", "neighbour_state": "PERMANENT",
//               "neighbour_mac": "02:00:00:00:00:99", "peer_netdev": "veth0",
//               "peer_mac": "02:00:0a:63:00:01"}]}
//
// "paths" (issue 31 item 5, optional: absent in older files, ignored by older
// readers) holds the connected RoCE QPs' path facts (ObservedPath, observed.h);
// empty strings and false flags are left out.
//
// Added to version 1 (written only when known, so older files and readers
// are unaffected): "num_qps" on the first line, the most QPs in a sample (a
// reader of many files sizes its tables from the heads: SnapshotHeadQps);
// "started_epoch", the first sample's start on the host's wall clock (seconds
// since the epoch; the skew of snapshots taken together); "job", the job the
// snapshot was taken for; "identity", the host identity, one member per port:
//   "identity": [{"device": "rxe0", "port": 1, "link_layer": "Ethernet",
//                 "lid": 0, "lmc": 0, "sm_lid": 0,
//                 "subnet_prefix": "0xfe80000000000000",
//                 "gids": ["fe80::...", "::ffff:10.99.0.1"]}]
// a QP's destination address "dgid"/"dlid" where the kernel shows it; and
// "src_addr"/"dst_addr", the addresses of the QP's rdma_cm id (cm_id.h).
//
// A kernel QP has pid 0 and its owner module as comm; a value the kernel does
// not report is null. Readers ignore unknown keys, so members can be added
// without a new version; a change of meaning gets a new version number.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/observe/snapshot.h"
#include "qpconnect/result.h"

namespace qpconnect {

inline constexpr std::string_view kSnapshotFormat = "qpconnect-snapshot";
inline constexpr int kSnapshotVersion = 1;

// The snapshot file's text: the members above, one QP or port per line (so
// that grep and diff work on it), each as compact JSON.
std::string SnapshotToText(const Snapshot& snapshot);

// True when `text` starts like a snapshot file (its "format" member is
// "qpconnect-snapshot"): a cheap test to route an input file.
bool LooksLikeSnapshot(std::string_view text);

// The "num_qps" a snapshot file's head (its first 512 bytes or more)
// declares; 0 when it declares none (files written before it was added).
size_t SnapshotHeadQps(std::string_view head);

// The job file of qp-inspect-mpi: every rank's snapshot file, by rank, in one
// document: {"format": "qpconnect-job-snapshots", "version": 1,
// "snapshots": [SNAPSHOT, ...]} (each element as SnapshotToText writes it).
// Added to version 1: "hosts", the job's host list (job_hosts.h), before
// "snapshots" and written only when known.
inline constexpr std::string_view kJobSnapshotsFormat = "qpconnect-job-snapshots";
std::string JobSnapshotsToText(const std::vector<std::string>& snapshot_texts,
                               const std::vector<std::string>& hosts = {});
// The same text written to `out` as it goes (no copy of the whole job).
void WriteJobSnapshots(const std::vector<std::string>& snapshot_texts, std::ostream& out,
                       const std::vector<std::string>& hosts = {});
// (JobHostsFromJson, job_hosts.h, reads "hosts".)
bool LooksLikeJobSnapshots(std::string_view text);
// kProtocol as SnapshotFromJson, the attribute prefixed "snapshots[i].".
Result<std::vector<Snapshot>> JobSnapshotsFromJson(std::string_view text);

// The job file read from `in` in one pass, one rank's snapshot at a time,
// with no JSON tree and no size limit: each(rank, snapshot) is called in
// rank order as soon as that snapshot is read. Memory beyond the snapshot
// in hand: its text and a read buffer (1 MiB, or the snapshot's size).
// "format" and "version" come before "snapshots" (as JobSnapshotsToText
// writes them). Returns the number of snapshots; kProtocol as
// JobSnapshotsFromJson (which reads through it), kIo for a read error.
// Snapshots before a fault have been given to `each`.
// When `hosts` is given, the job's host list ("hosts", JobHostsFromArray in
// job_hosts.h) is stored there, each name once (empty when the file has none).
Result<size_t> ReadJobSnapshots(std::istream& in,
                                const std::function<void(size_t, Snapshot&&)>& each,
                                std::vector<std::string>* hosts = nullptr);

// Parses a snapshot file. kProtocol for malformed JSON, another format, an
// unsupported version or a bad field; the Error's attribute names the field
// ("samples[1].qps[3].lqpn") and its detail says what is wrong.
Result<Snapshot> SnapshotFromJson(std::string_view text);

}  // namespace qpconnect
