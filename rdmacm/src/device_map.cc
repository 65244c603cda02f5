// SPDX-License-Identifier: MIT
#include "device_map.h"

#include <fstream>
#include <sstream>

#include "sockaddr.h"

namespace qpconnect::rdmacm {
namespace {

// Whether the map's `key` names `addr`; an unparsable key is noted.
bool Names(const std::string& key, const sockaddr* addr, std::vector<std::string>* unparsed) {
  sockaddr_storage mapped{};
  if (!ParseAddress(key, mapped)) {
    if (unparsed != nullptr) unparsed->push_back(key);
    return false;
  }
  return SameAddress(reinterpret_cast<const sockaddr*>(&mapped), addr);
}

}  // namespace

std::optional<DeviceMapHit> LookUpDeviceMap(const sockaddr* addr, const char* devices,
                                            const char* config_path,
                                            std::vector<std::string>* unparsed) {
  if (devices != nullptr && *devices != '\0') {
    std::stringstream list(devices);
    std::string item;
    while (std::getline(list, item, ',')) {
      auto eq = item.find('=');
      if (eq != std::string::npos && Names(item.substr(0, eq), addr, unparsed))
        return DeviceMapHit{item.substr(eq + 1), "QPCM_DEVICES"};
    }
  }
  if (config_path != nullptr && *config_path != '\0') {
    std::ifstream file(config_path);
    std::string line;
    while (std::getline(file, line)) {
      if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::stringstream words(line);
      std::string key, spec;
      if (words >> key >> spec && Names(key, addr, unparsed))
        return DeviceMapHit{spec, std::string("QPCM_CONFIG (") + config_path + ")"};
    }
  }
  return std::nullopt;
}

}  // namespace qpconnect::rdmacm
