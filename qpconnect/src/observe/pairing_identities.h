// SPDX-License-Identifier: MIT
// Each observed QP's (host, device) as a small number, the ports' GIDs and
// LIDs indexed by it, and the jobs: what a destination address names.
//
// Internal to pairing.cc (rules in qpconnect/observe/pairing.h).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pairing_evidence.h"
#include "qpconnect/observe/observed.h"

namespace qpconnect::pairing_detail {

// Each QP's (host, device) as a small number, the ports' GIDs and LIDs
// indexed by it, and the QPs indexed by QP number.
class Identities {
 public:
  explicit Identities(const Observation& obs) : qps_(obs.qps) {
    dev_of_.reserve(qps_.size());
    const ObservedQp* last = nullptr;  // a host's QPs come together: reuse its id
    for (const ObservedQp& q : qps_) {
      const bool same = last != nullptr && last->host == q.host && last->device == q.device;
      dev_of_.push_back(same ? dev_of_.back() : Intern(q.host, q.device));
      last = &q;
    }
    std::unordered_map<std::string, const ObservedHost*> host_by_name;
    for (const ObservedHost& h : obs.hosts) {
      host_by_name.emplace(h.name, &h);
      for (const PortIdentity& p : h.ports) {
        const uint32_t dev = Intern(h.name, p.device);
        for (const Gid& g : p.gids) AddGid(g, dev);
        AddLids(p.lid, p.lmc, dev);
      }
    }
    dests_.reserve(qps_.size());
    for (const ObservedQp& q : qps_) dests_.push_back(DestOf(q));
    for (size_t i = 0; i < qps_.size(); ++i) {
      const ObservedQp& q = qps_[i];
      if (q.endpoint) {
        for (const GidEntry& g : q.endpoint->gid_table) AddGid(g.gid, dev_of_[i]);
        if (q.endpoint->path.sgid) AddGid(q.endpoint->path.sgid->gid, dev_of_[i]);
        AddLids(q.endpoint->port.lid, q.endpoint->port.lmc, dev_of_[i]);
      }
    }
    // Jobs as small numbers, 0 for none.
    std::unordered_map<std::string, uint32_t> job_ids;
    job_of_.assign(qps_.size(), 0);
    const ObservedQp* prev = nullptr;
    for (size_t i = 0; i < qps_.size(); ++i) {
      if (prev != nullptr && prev->host == qps_[i].host) {
        job_of_[i] = job_of_[i - 1];
      } else if (auto it = host_by_name.find(qps_[i].host);
                 it != host_by_name.end() && !it->second->job.empty()) {
        job_of_[i] = job_ids.try_emplace(it->second->job, job_ids.size() + 1).first->second;
      }
      prev = &qps_[i];
    }
  }

  uint32_t Dev(size_t i) const { return dev_of_[i]; }
  const Dest& DestAt(size_t i) const { return dests_[i]; }
  bool HasDest(size_t i) const { return dests_[i].gid || dests_[i].lid; }

  // The devices `d` names; empty when it names none observed.
  const std::vector<uint32_t>& Targets(const Dest& d) const {
    if (d.gid) {
      auto it = gid_owner_.find(*d.gid);
      if (it != gid_owner_.end()) return it->second;
    } else if (d.lid) {
      auto it = lid_owner_.find(*d.lid);
      if (it != lid_owner_.end()) return it->second;
    }
    return none_;
  }

  // What `from`'s destination says about QP `to`.
  AimResult Aims(size_t from, size_t to) const { return AimsAt(dests_[from], to); }

  // What destination `d` says about QP `to`: its port's identity holds the
  // address, does not (when that identity is known), or nothing is known.
  AimResult AimsAt(const Dest& d, size_t to) const {
    const uint32_t dev = dev_of_[to];
    if (d.gid) {
      if (!dev_has_gids_[dev]) return {};
      return {Owns(gid_owner_, *d.gid, dev) ? Aim::kMatches : Aim::kContradicts, true};
    }
    if (d.lid) {
      if (!dev_has_lids_[dev]) return {};
      return {Owns(lid_owner_, *d.lid, dev) ? Aim::kMatches : Aim::kContradicts, false};
    }
    return {};
  }

  // Both snapshots name a job and the jobs differ.
  uint32_t Job(size_t i) const { return job_of_[i]; }

  bool OtherJob(size_t i, size_t j) const {
    return job_of_[i] != 0 && job_of_[j] != 0 && job_of_[i] != job_of_[j];
  }

 private:
  uint32_t Intern(const std::string& host, const std::string& device) {
    auto [it, inserted] =
        dev_ids_.try_emplace(host + '\n' + device, static_cast<uint32_t>(dev_ids_.size()));
    if (inserted) {
      dev_has_gids_.push_back(false);
      dev_has_lids_.push_back(false);
    }
    return it->second;
  }

  template <typename Map, typename Key>
  static void AddOwner(Map& map, const Key& key, uint32_t dev) {
    std::vector<uint32_t>& owners = map[key];
    if (std::find(owners.begin(), owners.end(), dev) == owners.end()) owners.push_back(dev);
  }

  template <typename Map, typename Key>
  static bool Owns(const Map& map, const Key& key, uint32_t dev) {
    auto it = map.find(key);
    return it != map.end() &&
           std::find(it->second.begin(), it->second.end(), dev) != it->second.end();
  }

  void AddGid(const Gid& g, uint32_t dev) {
    if (IsZeroGid(g)) return;
    AddOwner(gid_owner_, g, dev);
    dev_has_gids_[dev] = true;
  }

  void AddLids(uint16_t lid, uint8_t lmc, uint32_t dev) {
    if (lid == 0) return;
    const uint32_t span = 1u << std::min<uint8_t>(lmc, 7);
    for (uint32_t k = 0; k < span && lid + k <= 0xffff; ++k) {
      AddOwner(lid_owner_, static_cast<uint16_t>(lid + k), dev);
    }
    dev_has_lids_[dev] = true;
  }

  const std::vector<ObservedQp>& qps_;
  std::unordered_map<std::string, uint32_t> dev_ids_;
  std::vector<uint32_t> dev_of_;
  std::vector<bool> dev_has_gids_;
  std::vector<bool> dev_has_lids_;
  std::unordered_map<Gid, std::vector<uint32_t>, GidHash> gid_owner_;
  std::unordered_map<uint16_t, std::vector<uint32_t>> lid_owner_;
  std::vector<Dest> dests_;       // each QP's destination, DestOf()
  std::vector<uint32_t> job_of_;  // each QP's job, 0 when none is named
  const std::vector<uint32_t> none_;
};

}  // namespace qpconnect::pairing_detail
