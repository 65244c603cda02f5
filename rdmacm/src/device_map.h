// SPDX-License-Identifier: MIT
// The device map a user gives the library (issue 29 item 3; spellings:
// issue 39): QPCM_DEVICES ("ADDR=DEV[:PORT[:GID]],...") and the file
// QPCM_CONFIG (lines "ADDR DEV[:PORT[:GID]]", '#' comments), read in that
// order. An ADDR is any spelling of an address (sockaddr.h's ParseAddress):
// "10.77.0.1" also names the ::ffff:10.77.0.1 a dual-stack listener sees,
// "fd77::1" also "FD77:0::1", and a link-local "fe80::1" names it on every
// netdev while "fe80::1%mgmt0" names it on mgmt0 only.
//
// Thread-safety: pure, but for reading the file it is given.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>
#include <vector>

namespace qpconnect::rdmacm {

struct DeviceMapHit {
  std::string spec;    // "rxe0:1", as written
  std::string source;  // "QPCM_DEVICES", "QPCM_CONFIG (/etc/qpcm.conf)"
};

// The first entry of `devices` (QPCM_DEVICES's value; null or empty: none),
// then of the file at `config_path` (null or empty: none), whose address is
// `addr` (SameAddress). Entries whose address does not parse are listed in
// `unparsed` (when given) and match nothing.
std::optional<DeviceMapHit> LookUpDeviceMap(const sockaddr* addr, const char* devices,
                                            const char* config_path,
                                            std::vector<std::string>* unparsed = nullptr);

}  // namespace qpconnect::rdmacm
