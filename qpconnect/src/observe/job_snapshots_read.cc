// SPDX-License-Identifier: MIT
// ReadJobSnapshots() (snapshot_json.h): qp-inspect-mpi's job file read in
// one pass from a stream. The outer object is split into its members by
// their brackets and quotes alone; each element of "snapshots" is read by
// SnapshotFromJson (the one-pass scanner, snapshot_scan.h) as soon as its
// closing brace is in the buffer, and its text is then dropped. The buffer
// holds the element being read and at most as much again (or a chunk).
#include <algorithm>
#include <cstddef>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/observe/snapshot_json.h"

#include "qpconnect/observe/job_hosts.h"

namespace qpconnect {
namespace {

constexpr size_t kChunk = size_t{1} << 20;

Error Bad(std::string attribute, std::string detail) {
  return Error{ErrorCode::kProtocol, 0, "job snapshots", std::move(attribute), std::move(detail)};
}

// The stream as a sequence of JSON tokens and whole values, refilled a
// chunk at a time.
class Values {
 public:
  explicit Values(std::istream& in) : in_(in) {}

  bool ReadFailed() const { return in_.bad(); }

  // The next character that is not white space (consumed), or nullopt at
  // the end of the stream.
  std::optional<char> Next() {
    if (!SkipSpace()) return std::nullopt;
    return buf_[pos_++];
  }

  // The next character that is not white space, left in place.
  std::optional<char> Peek() {
    if (!SkipSpace()) return std::nullopt;
    return buf_[pos_];
  }

  // The whole next value's text (valid until the next call), or nullopt
  // when the stream ends inside it or its brackets do not match.
  std::optional<std::string_view> Value() {
    if (!SkipSpace()) return std::nullopt;
    const char first = buf_[pos_];
    size_t at = pos_;  // scanned up to here
    if (first != '{' && first != '[' && first != '"') {
      // A number, true, false or null: up to a delimiter.
      for (;;) {
        while (at < buf_.size() && !Delimiter(buf_[at])) ++at;
        if (at < buf_.size() || !Fill(&at)) break;
      }
      return Take(at);
    }
    std::string stack;  // the closing brackets awaited
    bool in_string = false;
    for (;;) {
      for (; at < buf_.size(); ++at) {
        const char c = buf_[at];
        if (in_string) {
          if (c == '\\') {
            if (at + 1 >= buf_.size()) break;  // the escaped character is in the next chunk
            ++at;
          } else if (c == '"') {
            in_string = false;
            if (stack.empty()) return Take(at + 1);
          }
        } else if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          stack.push_back(c == '{' ? '}' : ']');
        } else if (c == '}' || c == ']') {
          if (stack.empty() || stack.back() != c) return std::nullopt;
          stack.pop_back();
          if (stack.empty()) return Take(at + 1);
        }
      }
      if (!Fill(&at)) return std::nullopt;
    }
  }

 private:
  static bool Delimiter(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }

  std::string_view Take(size_t end) {
    std::string_view v(buf_.data() + pos_, end - pos_);
    pos_ = end;
    return v;
  }

  bool SkipSpace() {
    for (;;) {
      while (pos_ < buf_.size() && (buf_[pos_] == ' ' || buf_[pos_] == '\n' || buf_[pos_] == '\r' ||
                                    buf_[pos_] == '\t')) {
        ++pos_;
      }
      if (pos_ < buf_.size()) return true;
      if (!Fill(nullptr)) return false;
    }
  }

  // Drops what was consumed and appends a chunk; `scanned` (an offset in
  // the buffer) moves with the text. False at the end of the stream.
  bool Fill(size_t* scanned) {
    if (!in_) return false;
    buf_.erase(0, pos_);
    if (scanned != nullptr) *scanned -= pos_;
    pos_ = 0;
    // A chunk, or as much as the buffer holds: a large element is read in
    // a number of reads that grows with the log of its size.
    const size_t had = buf_.size();
    const size_t want = std::max(kChunk, had);
    buf_.resize(had + want);
    in_.read(buf_.data() + had, static_cast<std::streamsize>(want));
    buf_.resize(had + static_cast<size_t>(in_.gcount()));
    return buf_.size() > had;
  }

  std::istream& in_;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace

Result<size_t> ReadJobSnapshots(std::istream& in,
                                const std::function<void(size_t, Snapshot&&)>& each,
                                std::vector<std::string>* hosts) {
  if (hosts != nullptr) hosts->clear();
  Values v(in);
  auto failed = [&](Error e) -> Result<size_t> {
    if (v.ReadFailed()) return Error{ErrorCode::kIo, 0, "job snapshots", "", "read error"};
    return e;
  };
  if (v.Next() != '{') return failed(Bad("", "not a JSON object"));
  bool format = false, version = false, snapshots = false;
  size_t count = 0;
  if (v.Peek() == '}') {
    v.Next();
  } else {
    for (;;) {
      const std::optional<std::string_view> key_text = v.Value();
      if (!key_text || key_text->empty() || key_text->front() != '"' || v.Next() != ':') {
        return failed(Bad("", "not a JSON object"));
      }
      const nlohmann::json key = nlohmann::json::parse(*key_text, nullptr, false);
      if (!key.is_string()) return failed(Bad("", "not a JSON object"));
      if (key == "snapshots") {
        if (!format) return Bad("format", "not a job snapshot file");
        if (!version) return Bad("version", "only version 1 is read");
        if (v.Peek() != '[') return failed(Bad("snapshots", "missing"));
        v.Next();
        snapshots = true;
        if (v.Peek() == ']') {
          v.Next();
        } else {
          for (;;) {
            const std::string at = "snapshots[" + std::to_string(count) + "]";
            const std::optional<std::string_view> text = v.Value();
            if (!text) return failed(Bad(at, "not valid JSON (the file ends or breaks in it)"));
            Result<Snapshot> s = SnapshotFromJson(*text);
            if (!s) {
              Error e = s.error();
              e.operation = "job snapshots";
              e.attribute = at + (e.attribute.empty() ? "" : "." + e.attribute);
              return e;
            }
            each(count++, std::move(*s));
            const std::optional<char> next = v.Next();
            if (next == ']') break;
            if (next != ',') return failed(Bad("snapshots", "not valid JSON after " + at));
          }
        }
      } else {
        const std::optional<std::string_view> value = v.Value();
        if (!value) return failed(Bad("", "not a JSON object"));
        if (key == "hosts" && hosts != nullptr) {
          Result<std::vector<std::string>> listed = JobHostsFromArray(*value);
          if (!listed) return listed.error();
          *hosts = std::move(*listed);
        }
        if (key == "format" || key == "version") {
          const nlohmann::json j = nlohmann::json::parse(*value, nullptr, false);
          if (j.is_discarded()) return failed(Bad("", "not a JSON object"));
          if (key == "format") {
            format = j.is_string() && j.get<std::string>() == kJobSnapshotsFormat;
          }
          if (key == "version") version = j == 1;
        }
      }
      const std::optional<char> next = v.Next();
      if (next == '}') break;
      if (next != ',') return failed(Bad("", "not a JSON object"));
    }
  }
  if (v.Peek()) return failed(Bad("", "not a JSON object"));
  if (!format) return Bad("format", "not a job snapshot file");
  if (!version) return Bad("version", "only version 1 is read");
  if (!snapshots) return Bad("snapshots", "missing");
  return count;
}

}  // namespace qpconnect
