// SPDX-License-Identifier: Apache-2.0
#include "cli/spec_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "autotune/tune_report.h"
#include "kjit/error.hpp"
#include "runtime/bounded_json.h"
#include "runtime/op_tools.h"

namespace kjit::cli {
namespace {

using nlohmann::ordered_json;

// A spec lists shapes: a few kilobytes. Anything near this is a wrong file (or /dev/zero).
constexpr std::size_t kMaxSpecBytes = std::size_t{16} << 20;
// A deployment's shapes number in the hundreds; a spec beyond this is a mistake.
constexpr std::size_t kMaxSpecCalls = 100000;

[[noreturn]] void reject(const std::string& where, const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, where + ": " + what);
}

/// Reads the spec at `path` into `text`: a regular file or a pipe (`--spec <(...)`), at most
/// kMaxSpecBytes. Returns "" or the reason, with errno's text where there is one.
std::string read_spec_text(const std::string& path, std::string& text) {
  // O_NONBLOCK for the open only: a FIFO without a writer then reads as empty instead of
  // waiting forever; the reads themselves block as usual.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::strerror(errno);
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) problem = std::strerror(errno);
  else if (S_ISDIR(st.st_mode)) problem = "it is a directory";
  else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) problem = "it is not a regular file or a pipe";
  else if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) problem = std::strerror(errno);
  char buffer[1 << 16];
  while (problem.empty()) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) problem = std::strerror(errno);
    if (n <= 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxSpecBytes)
      problem = "longer than " + std::to_string(kMaxSpecBytes >> 20) + " MiB, too long for a spec";
    else text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return problem;
}

/// The call fields a spec field sets.
std::vector<std::string> call_fields(const std::string& spec_field) {
  if (spec_field == "ops") return {"op"};
  if (spec_field == "dtypes") return {"dtype"};
  if (spec_field == "index_dtypes") return {"index_dtype"};
  return {spec_field};
}

bool reads_any(const OpTools& tools, const std::string& spec_field) {
  const std::vector<std::string> read = tools.fields();
  for (const std::string& field : call_fields(spec_field))
    if (std::find(read.begin(), read.end(), field) != read.end()) return true;
  return false;
}

/// The entry's "ops" as the tools serving each; names the bad element.
std::vector<std::pair<std::string, const OpTools*>> entry_ops(const ordered_json& ops,
                                                              const std::string& where) {
  std::vector<std::pair<std::string, const OpTools*>> found;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string at = where + ", \"ops\"[" + std::to_string(i) + "]";
    if (!ops[i].is_string()) reject(at, ops[i].dump() + " is not a string");
    try {
      found.emplace_back(ops[i].get<std::string>(), &op_tools(ops[i].get<std::string>()));
    } catch (const Error& e) {
      reject(at, e.what());
    }
  }
  return found;
}

/// Every combination of the lists `fields` of `entry`, added to `call`, one call each.
void expand(const ordered_json& entry, const std::vector<std::string>& fields, std::size_t next,
            SpecCall call, std::vector<SpecCall>& calls) {
  if (next == fields.size()) {
    calls.push_back(std::move(call));
    return;
  }
  for (const auto& value : entry.at(fields[next])) {
    SpecCall with = call;
    for (const std::string& field : call_fields(fields[next])) with[field] = value;
    expand(entry, fields, next + 1, std::move(with), calls);
  }
}

void parse_entry(const ordered_json& entry, const std::string& where, std::vector<SpecCall>& calls) {
  if (!entry.is_object()) reject(where, "must be an object with \"ops\" and the fields they read");
  if (!entry.contains("ops")) reject(where, "missing field \"ops\" (one of " + known_ops() + ")");
  for (const auto& item : entry.items()) {
    if (!item.value().is_array()) reject(where + ", \"" + item.key() + "\"", "must be a list");
    if (item.value().empty()) reject(where + ", \"" + item.key() + "\"", "must not be empty");
  }
  const auto ops = entry_ops(entry.at("ops"), where);
  for (const auto& item : entry.items()) {
    if (item.key() == "ops") continue;
    const bool read = std::any_of(ops.begin(), ops.end(),
                                  [&](const auto& op) { return reads_any(*op.second, item.key()); });
    if (read) continue;
    const auto& all = all_op_tools();
    const bool known = std::any_of(all.begin(), all.end(),
                                   [&](const OpTools* tools) { return reads_any(*tools, item.key()); });
    reject(where, known ? "field \"" + item.key() + "\" is read by none of this entry's ops"
                        : "unknown field \"" + item.key() + "\"");
  }
  for (const auto& [op, tools] : ops) {
    std::vector<std::string> fields;
    for (const auto& item : entry.items())
      if (item.key() != "ops" && reads_any(*tools, item.key())) fields.push_back(item.key());
    // Counted before expanding: lists multiply, and a few long ones would not fit in memory.
    std::size_t count = 1;
    for (const std::string& field : fields)
      count = std::min(count * entry.at(field).size(), kMaxSpecCalls + 1);  // < 2^17 * 2^24
    if (count > kMaxSpecCalls - calls.size())
      reject(where, "expands to more than " + std::to_string(kMaxSpecCalls) + " calls");
    std::vector<SpecCall> expanded;
    expand(entry, fields, 0, SpecCall{{"op", op}}, expanded);
    for (SpecCall& call : expanded) {
      try {
        tools->check(call);
      } catch (const Error& e) {
        reject(where, describe(call) + ": " + e.what());
      }
      calls.push_back(std::move(call));
    }
  }
}

}  // namespace

std::vector<SpecCall> parse_spec(const std::string& text, const std::string& origin) {
  // Depth-limited: the error texts below print values, and printing recurses once per level.
  std::string problem;
  std::optional<ordered_json> parsed = parse_ordered_json_bounded(text, problem);
  if (!parsed) reject(origin, "not valid JSON: " + problem);
  const ordered_json& document = *parsed;
  std::vector<SpecCall> calls;
  if (document.is_object()) {
    parse_entry(document, origin, calls);
    return calls;
  }
  if (!document.is_array() || document.empty())
    reject(origin, "must be an entry object or a non-empty list of them");
  for (std::size_t i = 0; i < document.size(); ++i)
    parse_entry(document[i], origin + ": entry " + std::to_string(i), calls);
  return calls;
}

std::vector<SpecCall> load_spec_file(const std::string& path) {
  std::string text;
  if (std::string problem = read_spec_text(path, text); !problem.empty())
    reject("--spec", "cannot read '" + path + "': " + problem);
  return parse_spec(text, path);
}

std::string describe(const SpecCall& call) { return describe_problem(call); }

}  // namespace kjit::cli
