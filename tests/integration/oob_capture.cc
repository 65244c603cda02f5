// SPDX-License-Identifier: MIT
// oob_capture: the eavesdropper of the keyed-session lab test (issue 18).
//
//   oob_capture relay PORT TARGET_IP TARGET_PORT CAPTURE
//       Listens on 0.0.0.0:PORT, takes one client, connects it to
//       TARGET_IP:TARGET_PORT and forwards bytes both
//       ways until either side closes, writing what it forwarded to
//       CAPTURE.c2s and CAPTURE.s2c. Exits 0 after the session, 1 on error.
//   oob_capture check [--lines] QPN... -- FILE...
//       Reads each FILE as the bytes of one direction (with --lines: stdio
//       lines "qpcN:<base64url frame>"), splits it into frames and reports
//       what an eavesdropper learns: every frame's type and flags; for each
//       description frame whether the codec decodes its payload (after the
//       binding) into a description; and whether the encoding the codec gives
//       each QPN (the first QP's qpn_delta column: 0a <len> <varint>) occurs
//       anywhere in the bytes. Exits 0 when nothing was disclosed (no
//       description decodes, no QPN found), 1 when something was, 2 on a
//       usage or read error. The test runs it on a keyed session (expects 0)
//       and on the same session without a key (expects 1: the check works).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/stdio.h"

namespace {

using namespace qpconnect::oob;  // NOLINT: a test tool

int Relay(int port, const char* target_ip, int target_port, const std::string& capture) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listener, 1) != 0) {
    std::perror("oob_capture relay: listen");
    return 1;
  }
  const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in t{};
  t.sin_family = AF_INET;
  t.sin_port = htons(static_cast<uint16_t>(target_port));
  ::inet_pton(AF_INET, target_ip, &t.sin_addr);
  if (client < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&t), sizeof t) != 0) {
    std::perror("oob_capture relay: connect");
    return 1;
  }
  std::ofstream out[2] = {std::ofstream(capture + ".c2s", std::ios::binary),
                          std::ofstream(capture + ".s2c", std::ios::binary)};
  const int from[2] = {client, server};
  const int to[2] = {server, client};
  for (;;) {
    pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) return 1;
    for (int d = 0; d < 2; ++d) {
      if (p[d].revents == 0) continue;
      char buf[65536];
      const ssize_t n = ::read(from[d], buf, sizeof buf);
      if (n <= 0) return 0;  // a side closed: the session is over
      out[d].write(buf, n);
      out[d].flush();
      if (::send(to[d], buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) return 0;
    }
  }
}

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

std::string Hex(std::string_view s) {
  std::string out;
  char b[4];
  for (char c : s) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    out += b;
  }
  return out;
}

// The frames of one direction's bytes.
std::vector<std::string> SplitFrames(const std::string& bytes, bool lines) {
  std::vector<std::string> frames;
  if (lines) {
    std::istringstream in(bytes);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("qpc", 0) != 0) continue;
      auto frame = DecodeStdioLine(line);
      if (frame) frames.push_back(*frame);
    }
    return frames;
  }
  size_t at = 0;
  while (at + kFrameHeaderBytes <= bytes.size()) {
    auto size = PeekFrameSize(bytes.substr(at), kMaxPayloadBytesLimit);
    if (!size || *size == 0 || at + *size > bytes.size()) break;
    frames.push_back(bytes.substr(at, *size));
    at += *size;
  }
  return frames;
}

int Check(bool lines, const std::vector<uint32_t>& qpns, const std::vector<std::string>& files) {
  bool disclosed = false;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "oob_capture check: cannot read " << file << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    std::string all_frames;
    const auto frames = SplitFrames(bytes, lines);
    std::cout << file << ": " << bytes.size() << " bytes, " << frames.size() << " frames\n";
    for (const auto& f : frames) {
      all_frames += f;
      auto frame = DecodeFrame(f, kMaxPayloadBytesLimit);
      if (!frame) continue;
      std::cout << "  " << FrameTypeName(frame->type) << " flags 0x" << std::hex
                << static_cast<int>(frame->flags) << std::dec << ", " << f.size() << " bytes";
      if (frame->type == FrameType::kEndpoint) {
        const bool bound = (frame->flags & kFrameFlagBound) != 0;
        const std::string_view body =
            std::string_view(frame->payload).substr(bound && frame->payload.size() >= 36 ? 36 : 0);
        if (auto e = DecodeBinary(body)) {
          disclosed = true;
          std::cout << ": DISCLOSED, a description of " << e->qps.size() << " QP(s) from "
                    << e->identity.host << " " << e->identity.device << " (first QPN 0x" << std::hex
                    << e->qps[0].qpn << std::dec << ")";
        } else {
          std::cout << ": the codec cannot parse it (" << e.error().detail << ")";
        }
      }
      std::cout << "\n";
    }
    // Stdio lines are text: the QPNs would be in the decoded frames.
    const std::string& haystack = lines ? all_frames : bytes;
    for (uint32_t qpn : qpns) {
      const std::string v = Varint(uint64_t{qpn} << 1);  // zig-zag of a positive delta
      const std::string needle = std::string("\x0a", 1) + static_cast<char>(v.size()) + v;
      if (haystack.find(needle) != std::string::npos) {
        disclosed = true;
        std::cout << "  QPN 0x" << std::hex << qpn << std::dec << " found (bytes " << Hex(needle)
                  << ")\n";
      }
    }
  }
  std::cout << (disclosed ? "DISCLOSED\n" : "nothing disclosed\n");
  return disclosed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 5 && args[0] == "relay") {
    return Relay(std::atoi(args[1].c_str()), args[2].c_str(), std::atoi(args[3].c_str()), args[4]);
  }
  if (!args.empty() && args[0] == "check") {
    bool lines = false;
    std::vector<uint32_t> qpns;
    std::vector<std::string> files;
    bool after = false;
    for (size_t i = 1; i < args.size(); ++i) {
      if (after) {
        files.push_back(args[i]);
      } else if (args[i] == "--") {
        after = true;
      } else if (args[i] == "--lines") {
        lines = true;
      } else {
        qpns.push_back(static_cast<uint32_t>(std::strtoul(args[i].c_str(), nullptr, 0)));
      }
    }
    if (!files.empty()) return Check(lines, qpns, files);
  }
  std::cerr << "usage: oob_capture relay PORT TARGET_IP TARGET_PORT CAPTURE\n"
               "       oob_capture check [--lines] QPN... -- FILE...\n";
  return 2;
}
