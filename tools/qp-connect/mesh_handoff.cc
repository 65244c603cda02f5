// SPDX-License-Identifier: MIT
#include "mesh_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exit_codes.h"

namespace qpconnect::tools {

std::optional<std::vector<std::string>> MeshArgs(const std::vector<std::string>& args) {
  std::vector<std::string> rest;
  bool mpi = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {  // the rest is positional: not ours to look at
      rest.insert(rest.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (args[i] == "--oob=mpi") {
      mpi = true;
      continue;
    }
    if (args[i] == "--oob" && i + 1 < args.size() && args[i + 1] == "mpi") {
      mpi = true;
      ++i;
      continue;
    }
    rest.push_back(args[i]);
  }
  if (!mpi) return std::nullopt;
  return rest;
}

std::vector<std::string> MeshCandidates(const std::string& self_dir, const char* env) {
  std::vector<std::string> c;
  if (env != nullptr && *env != '\0') {
    c.emplace_back(env);
    return c;  // asked for this one: no fallback that would hide a typo
  }
  if (!self_dir.empty()) {
    c.push_back(self_dir + "/qp-mesh");
    c.push_back(self_dir + "/../qp-mesh/qp-mesh");
  }
  c.emplace_back("qp-mesh");
  return c;
}

std::optional<int> HandOffToMesh(const std::vector<std::string>& args, std::ostream& err) {
  auto rest = MeshArgs(args);
  if (!rest) return std::nullopt;
  std::string self_dir;
  char buf[4096];
  if (ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1); n > 0) {
    std::string self(buf, static_cast<size_t>(n));
    if (auto slash = self.rfind('/'); slash != std::string::npos) self_dir = self.substr(0, slash);
  }
  std::string tried;
  for (const std::string& path : MeshCandidates(self_dir, std::getenv("QPC_QP_MESH"))) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(path.c_str()));
    for (std::string& a : *rest) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (path.find('/') == std::string::npos) {
      ::execvp(path.c_str(), argv.data());
    } else {
      ::execv(path.c_str(), argv.data());
    }
    tried += (tried.empty() ? "" : ", ") + path + " (" + std::strerror(errno) + ")";
  }
  err << "qp-connect: --oob mpi runs qp-mesh (built when MPI is found; docs/mesh.md), and none "
         "could be run: tried "
      << tried << ". Set QPC_QP_MESH to its path.\n";
  return kExitUsage;
}

}  // namespace qpconnect::tools
