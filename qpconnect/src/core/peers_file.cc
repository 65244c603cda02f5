// SPDX-License-Identifier: MIT
// The published-peers file: its place, its lines, and reading it back
// (qpconnect/peer_registry.h); the writer is peer_registry.cc.
#include "qpconnect/peer_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qpconnect {
namespace {

constexpr size_t kMaxFileBytes = size_t{64} << 20;

// ---- writing -------------------------------------------------------------

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

// ---- reading: one flat JSON object of strings and unsigned numbers --------

struct Field {
  std::string key;
  std::string text;  // the string's value, or the number's digits
  bool number = false;
};

// Parses `line` as {"k":"v","k":123,...}; false on anything else.
bool ParseFlatObject(std::string_view line, std::vector<Field>* out) {
  size_t i = 0;
  auto ws = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  };
  auto string = [&](std::string* s) {
    if (i >= line.size() || line[i] != '"') return false;
    ++i;
    while (i < line.size() && line[i] != '"') {
      char c = line[i++];
      if (c == '\\') {
        if (i >= line.size()) return false;
        char e = line[i++];
        if (e == 'u') {
          if (i + 4 > line.size()) return false;
          unsigned v = 0;
          for (int k = 0; k < 4; ++k) {
            char h = line[i++];
            v <<= 4;
            if (h >= '0' && h <= '9')
              v |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f')
              v |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              v |= static_cast<unsigned>(h - 'A' + 10);
            else
              return false;
          }
          if (v >= 0x80) return false;  // the writer escapes control characters only
          c = static_cast<char>(v);
        } else if (e == '"' || e == '\\' || e == '/') {
          c = e;
        } else {
          return false;
        }
      }
      if (s->size() >= 1024) return false;
      *s += c;
    }
    if (i >= line.size()) return false;
    ++i;
    return true;
  };
  ws();
  if (i >= line.size() || line[i++] != '{') return false;
  ws();
  if (i < line.size() && line[i] == '}') return ++i, true;
  while (true) {
    ws();
    Field f;
    if (!string(&f.key)) return false;
    ws();
    if (i >= line.size() || line[i++] != ':') return false;
    ws();
    if (i < line.size() && line[i] == '"') {
      if (!string(&f.text)) return false;
    } else {
      while (i < line.size() && line[i] >= '0' && line[i] <= '9' && f.text.size() < 20) {
        f.text += line[i++];
      }
      if (f.text.empty()) return false;
      f.number = true;
    }
    out->push_back(std::move(f));
    if (out->size() > 32) return false;
    ws();
    if (i >= line.size()) return false;
    if (line[i] == '}') {
      ++i;
      ws();
      return i == line.size();
    }
    if (line[i++] != ',') return false;
  }
}

const Field* Find(const std::vector<Field>& fields, std::string_view key) {
  for (const Field& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::optional<uint64_t> Number(const std::vector<Field>& fields, std::string_view key,
                               uint64_t max) {
  const Field* f = Find(fields, key);
  if (f == nullptr || !f->number || f->text.size() > 19) return std::nullopt;
  uint64_t v = std::strtoull(f->text.c_str(), nullptr, 10);
  if (v > max) return std::nullopt;
  return v;
}

std::optional<std::string> Text(const std::vector<Field>& fields, std::string_view key) {
  const Field* f = Find(fields, key);
  if (f == nullptr || f->number) return std::nullopt;
  return f->text;
}

// One event line's fields into `op` and `p` ("down": device and qpn only);
// false when a field is missing or out of range.
bool ReadEvent(const std::vector<Field>& fields, std::string* op, PublishedPeer* p) {
  auto o = Text(fields, "op");
  auto device = Text(fields, "device");
  auto qpn = Number(fields, "qpn", 0xffffff);
  if (!o || !device || device->empty() || !qpn) return false;
  *op = *o;
  p->device = *device;
  p->qpn = static_cast<uint32_t>(*qpn);
  if (*op == "down") return true;
  if (*op != "up") return false;
  auto port = Number(fields, "port", 255);
  auto peer_lid = Number(fields, "peer_lid", 0xffff);
  auto peer_qpn = Number(fields, "peer_qpn", 0xffffff);
  auto host = Text(fields, "peer_host");
  if (!port || !peer_lid || !peer_qpn || !host) return false;
  if (const Field* g = Find(fields, "peer_gid"); g != nullptr) {
    if (g->number) return false;
    p->peer_gid = GidFromString(g->text);
    if (!p->peer_gid) return false;
  }
  p->port = static_cast<uint8_t>(*port);
  p->peer_host = *host;
  p->peer_lid = static_cast<uint16_t>(*peer_lid);
  p->peer_qpn = static_cast<uint32_t>(*peer_qpn);
  return true;
}

bool ReadWhole(int fd, std::string* out, size_t max) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (out->size() + static_cast<size_t>(n) > max) return false;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::string PeersDir(uid_t uid, bool create, std::string* why) {
  if (const char* dir = std::getenv(kPeersDirEnv); dir != nullptr && *dir != '\0') {
    if (create) ::mkdir(dir, 0700);
    return dir;
  }
  const std::string run = "/run/user/" + std::to_string(uid);
  struct stat st {};
  if (::stat(run.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid) {
    const std::string dir = run + "/qpconnect/peers";
    if (create) {
      ::mkdir((run + "/qpconnect").c_str(), 0700);
      ::mkdir(dir.c_str(), 0700);
    }
    return dir;
  }
  const std::string base = "/tmp/qpconnect-" + std::to_string(uid);
  if (create) ::mkdir(base.c_str(), 0700);
  if (::lstat(base.c_str(), &st) != 0) {
    if (create && why != nullptr) *why = base + ": " + std::strerror(errno);
    return create ? "" : base + "/peers";
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022) != 0) {
    if (why != nullptr)
      *why = base + " is not a private directory of uid " + std::to_string(uid) +
             " (a symbolic link, another owner, or writable by others)";
    return "";
  }
  const std::string dir = base + "/peers";
  if (create) ::mkdir(dir.c_str(), 0700);
  return dir;
}

std::string PeersFile(const std::string& dir, int pid) {
  return dir + "/" + std::to_string(pid) + ".jsonl";
}

std::optional<uint64_t> ProcessStartTime(int pid, const std::string& proc_root) {
  std::ifstream f(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!f || !std::getline(f, text)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and ')'; fields after
  // the last ')' start at field 3.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  for (int n = 3; n <= 22; ++n) {
    if (!(rest >> field)) return std::nullopt;
  }
  char* end = nullptr;
  const uint64_t v = std::strtoull(field.c_str(), &end, 10);
  if (end == field.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::string PeersHeaderLine(int pid, uint64_t start_time, const std::string& host) {
  return "{\"qpconnect_peers\":1,\"pid\":" + std::to_string(pid) +
         ",\"start_time\":" + std::to_string(start_time) + ",\"host\":" + Quote(host) + "}\n";
}

std::string PeerUpLine(const PublishedPeer& p) {
  std::string s = "{\"op\":\"up\",\"device\":" + Quote(p.device) +
                  ",\"port\":" + std::to_string(p.port) + ",\"qpn\":" + std::to_string(p.qpn) +
                  ",\"peer_host\":" + Quote(p.peer_host);
  if (p.peer_gid) s += ",\"peer_gid\":" + Quote(GidToString(*p.peer_gid));
  s += ",\"peer_lid\":" + std::to_string(p.peer_lid) +
       ",\"peer_qpn\":" + std::to_string(p.peer_qpn) + "}\n";
  return s;
}

std::string PeerDownLine(const std::string& device, uint32_t qpn) {
  return "{\"op\":\"down\",\"device\":" + Quote(device) + ",\"qpn\":" + std::to_string(qpn) + "}\n";
}

PeersFileContents ParsePeersFile(std::string_view text) {
  PeersFileContents c;
  std::map<std::pair<std::string, uint32_t>, PublishedPeer> live;
  size_t bad = 0, lineno = 0;
  std::vector<Field> fields;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      ++bad;  // cut short: a write in progress, or a damaged file
      break;
    }
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    ++lineno;
    fields.clear();
    const bool parsed = ParseFlatObject(line, &fields);
    if (lineno == 1) {
      auto version = parsed ? Number(fields, "qpconnect_peers", 1000) : std::nullopt;
      auto pid = parsed ? Number(fields, "pid", 0x7fffffff) : std::nullopt;
      auto start = parsed ? Number(fields, "start_time", UINT64_MAX) : std::nullopt;
      if (!version || *version != 1 || !pid || !start) {
        c.notes.push_back("not a published-peers file (its first line is no header of version 1)");
        return c;
      }
      c.pid = static_cast<int>(*pid);
      c.start_time = *start;
      c.host = Text(fields, "host").value_or("");
      c.valid = true;
      continue;
    }
    PublishedPeer p;
    std::string op;
    if (!parsed || !ReadEvent(fields, &op, &p)) {
      ++bad;
      continue;
    }
    const auto key = std::make_pair(p.device, p.qpn);
    if (op == "down") {
      live.erase(key);
      continue;
    }
    live[key] = std::move(p);
  }
  if (bad != 0) {
    c.notes.push_back(std::to_string(bad) + " line(s) not of the format skipped");
  }
  for (auto& [key, p] : live) c.peers.push_back(std::move(p));
  return c;
}

PublishedPeersOfProcess ReadPublishedPeers(int pid, const std::string& dir,
                                           const std::string& proc_root) {
  PublishedPeersOfProcess r;
  if (pid <= 0) return r;
  try {
    struct stat proc {};
    const std::string proc_dir = proc_root + "/" + std::to_string(pid);
    if (::stat(proc_dir.c_str(), &proc) != 0) return r;  // gone
    const std::string where = dir.empty() ? PeersDir(proc.st_uid) : dir;
    if (where.empty()) return r;
    const std::string path = PeersFile(where, pid);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
      // ENOENT: none published. EACCES: another user's private directory.
      if (errno == EACCES) {
        r.denied = true;
        r.note = path + " unreadable: permission denied (root or the process's own user reads it)";
      }
      return r;
    }
    struct stat st {};
    std::string text;
    std::string problem;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      problem = "not a regular file";
    } else if (st.st_uid != proc.st_uid) {
      problem = "owned by uid " + std::to_string(st.st_uid) + ", the process runs as uid " +
                std::to_string(proc.st_uid);
    } else if (static_cast<size_t>(st.st_size) > kMaxFileBytes ||
               !ReadWhole(fd, &text, kMaxFileBytes)) {
      problem = "unreadable or larger than 64 MiB";
    }
    ::close(fd);
    if (problem.empty()) {
      PeersFileContents c = ParsePeersFile(text);
      const auto live_start = ProcessStartTime(pid, proc_root);
      if (!c.valid) {
        problem = c.notes.empty() ? "not of the format" : c.notes.front();
      } else if (c.pid != pid) {
        problem = "it names pid " + std::to_string(c.pid);
      } else if (!live_start || *live_start != c.start_time) {
        problem = "stale: written by an earlier process with this pid (start time " +
                  std::to_string(c.start_time) + ", the live process's " +
                  (live_start ? std::to_string(*live_start) : std::string("unknown")) + ")";
      } else {
        r.peers = std::move(c.peers);
        if (!c.notes.empty()) r.note = path + ": " + c.notes.front();
        return r;
      }
    }
    r.note = path + " ignored: " + problem;
  } catch (...) {
    r.peers.clear();
    r.note = "published peers of pid " + std::to_string(pid) + " unreadable";
  }
  return r;
}

}  // namespace qpconnect
