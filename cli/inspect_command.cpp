// SPDX-License-Identifier: Apache-2.0
// `kjit inspect`: what the disk cache holds (a table, one entry in full with --log), and with
// --explain which kernel a call maps to and why it is or is not cached.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/driver/nominal_device.h"
#include "cache/bundle.h"
#include "cache/disk_cache.h"
#include "cli/call_flags.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "cli/spec_file.h"
#include "kjit/error.hpp"
#include "runtime/bounded_json.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/op_tools.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit::cli {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* kCubinKind = "cubin";

struct InspectFlags {
  std::string cache_dir, log_key, arch;
  CallFlags call;
  bool explain = false, json = false;
};

/// The entry's digest: its file name without the suffix.
std::string digest_of(const cache::EntryInfo& info) {
  const std::size_t slash = info.path.find_last_of('/');
  const std::string name = info.path.substr(slash == std::string::npos ? 0 : slash + 1);
  return name.substr(0, name.find('.'));
}

/// Key texts are JSON objects; anything else (a foreign kind, a forged entry) reads as an empty
/// object.
json key_fields(const std::string& key_text) {
  std::string problem;
  std::optional<json> parsed = parse_json_bounded(key_text, problem);
  return parsed && parsed->is_object() ? *parsed : json::object();
}

/// A string field of a key, or `fallback` when it is absent or not a string.
std::string key_string(const json& fields, const char* name, const std::string& fallback) {
  const auto found = fields.find(name);
  return found != fields.end() && found->is_string() ? found->get<std::string>() : fallback;
}

std::string entry_kernel(const cache::EntryInfo& info) {
  if (info.facts.kernel) return *info.facts.kernel;
  return key_string(key_fields(info.key_text), "kernel", "-");
}

std::string entry_arch(const cache::EntryInfo& info) {
  if (info.facts.arch) return "sm_" + std::to_string(*info.facts.arch);
  return key_string(key_fields(info.key_text), "arch", "-");
}

long long age_seconds(std::chrono::system_clock::time_point mtime) {
  const auto age = std::chrono::system_clock::now() - mtime;
  return std::max<long long>(0, std::chrono::duration_cast<std::chrono::seconds>(age).count());
}

std::string age_text(std::chrono::system_clock::time_point mtime) {
  const long long s = age_seconds(mtime);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 2 * 3600) return std::to_string(s / 60) + "m";
  if (s < 2 * 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

// Entries compiled without a ptxas report (NVRTC answered from its own cache) have no resource
// fields: those read as null / "-", never as a misleading 0.
json registers_of(const cache::EntryMetadata& facts) {
  return facts.registers ? json(*facts.registers) : json();
}

json spill_bytes_of(const cache::EntryMetadata& facts) {
  if (!facts.spill_stores) return json();
  return *facts.spill_stores + facts.spill_loads.value_or(0);
}

std::string cell(const json& value) { return value.is_null() ? "-" : value.dump(); }

ordered_json entry_json(const cache::EntryInfo& info) {
  return {{"key", digest_of(info)},
          {"kind", info.kind},
          {"kernel", entry_kernel(info)},
          {"arch", entry_arch(info)},
          {"registers", registers_of(info.facts)},
          {"spill_bytes", spill_bytes_of(info.facts)},
          {"payload_bytes", info.payload_size},
          {"compile_ms", info.facts.compile_ms.value_or(0.0)},
          {"age_s", age_seconds(info.mtime)},
          {"path", info.path}};
}

void list_entries(cache::DiskCache& disk, bool as_json) {
  const std::vector<cache::EntryInfo> entries = disk.list();
  if (as_json) {
    ordered_json out = ordered_json::array();
    for (const auto& info : entries) out.push_back(entry_json(info));
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  if (entries.empty()) {
    std::printf("no entries in %s\n", disk.dir().c_str());
    return;
  }
  Table table({"key", "kind", "kernel", "arch", "regs", "spills", "bytes", "compile_ms", "age"});
  std::uint64_t total = 0;
  for (const auto& info : entries) {
    table.add({digest_of(info).substr(0, 12), info.kind, entry_kernel(info), entry_arch(info),
               cell(registers_of(info.facts)), cell(spill_bytes_of(info.facts)),
               std::to_string(info.payload_size),
               format("%.0f", info.facts.compile_ms.value_or(0.0)), age_text(info.mtime)});
    total += info.payload_size;
  }
  table.print();
  std::printf("%zu entries, %llu payload bytes in %s\n", entries.size(),
              static_cast<unsigned long long>(total), disk.dir().c_str());
}

void print_log(cache::DiskCache& disk, const std::string& prefix) {
  if (prefix.empty()) throw Error(Status::kErrorInvalidArgument, "--log: give a key prefix");
  std::vector<cache::EntryInfo> found;
  for (auto& info : disk.list())
    if (digest_of(info).rfind(prefix, 0) == 0) found.push_back(std::move(info));
  if (found.empty())
    throw Error(Status::kErrorNotFound,
                "--log: no entry in '" + disk.dir() + "' has a key starting with '" + prefix + "'");
  if (found.size() > 1)
    throw Error(Status::kErrorInvalidArgument, "--log: '" + prefix + "' matches " +
                                                   std::to_string(found.size()) +
                                                   " entries; give more of the key");
  const cache::EntryInfo& info = found.front();
  std::string problem;
  const std::optional<ordered_json> key = parse_ordered_json_bounded(info.key_text, problem);
  std::printf("key:      %s\n", digest_of(info).c_str());
  std::printf("kind:     %s\n", info.kind.c_str());
  std::printf("file:     %s\n", info.path.c_str());
  std::printf("payload:  %llu bytes\n", static_cast<unsigned long long>(info.payload_size));
  std::printf("age:      %s\n", age_text(info.mtime).c_str());
  // Dumped with invalid UTF-8 replaced and control characters escaped: entries can be forged.
  const auto dump = [](const auto& value) {
    return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::printf("key text:\n%s\n", key ? dump(*key).c_str() : printable(info.key_text).c_str());
  std::printf("metadata:\n%s\n", dump(info.metadata).c_str());
}

/// "nvrtc 12.8 (this call: 13.0), arch sm_80 (this call: sm_90)": how a stored key differs.
std::string key_differences(const json& ours, const json& theirs) {
  auto shown = [](const json& value) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    return text.size() > 16 ? text.substr(0, 12) + "..." : text;
  };
  std::string parts;
  for (const auto& field : ours.items()) {
    const json other = theirs.contains(field.key()) ? theirs[field.key()] : json();
    if (other == field.value()) continue;
    if (!parts.empty()) parts += ", ";
    parts += field.key() + " " + shown(other) + " (this call: " + shown(field.value()) + ")";
  }
  return parts.empty() ? "same key fields" : parts;
}

/// Entries for the same kernel under another key: the usual reasons for a miss.
std::vector<std::string> miss_hints(const std::vector<cache::EntryInfo>& entries,
                                    const std::string& key_text) {
  const json ours = key_fields(key_text);
  std::vector<std::string> hints;
  for (const auto& info : entries) {
    const json theirs = key_fields(info.key_text);
    if (info.kind != kCubinKind || key_string(theirs, "kernel", "") != key_string(ours, "kernel", ""))
      continue;
    hints.push_back("entry " + digest_of(info).substr(0, 12) + " has this kernel with " +
                    key_differences(ours, theirs));
  }
  return hints;
}

/// What --explain found out about one call.
struct Explanation {
  SpecCall call;
  PlannedKernel plan;
  DeviceProps device;
  bool on_gpu = false;
  std::string key_text;
  std::optional<cache::EntryInfo> entry;  ///< the disk entry for exactly this key
  std::string bundle;                     ///< KJIT_CACHE_BUNDLE when it holds the key
  std::vector<std::string> hints;         ///< why a miss may have happened
};

/// On a GPU whose properties differ from the nominal ones, a kernel precompiled without a GPU may
/// be cached while this GPU picks another one.
void add_nominal_hint(Explanation& x, const std::vector<cache::EntryInfo>& entries) {
  if (!x.on_gpu) return;
  const DeviceProps nominal = nominal_device(x.device.arch);
  const KernelSpec spec = op_tools(x.call["op"].get<std::string>()).plan(x.call, nominal, "auto").spec;
  if (spec.name_expression == x.plan.spec.name_expression) return;
  const std::string key_text = kernel_key_text(spec, x.device.arch);
  for (const auto& info : entries)
    if (info.key_text == key_text)
      x.hints.push_back("entry " + digest_of(info).substr(0, 12) + " holds " +
                        spec.name_expression + ", the pick for a nominal sm_" +
                        std::to_string(nominal.arch) + " (" + std::to_string(nominal.sm_count) +
                        " SMs, as `kjit precompile` plans without a GPU); this GPU has " +
                        std::to_string(x.device.sm_count) + " SMs and picks the kernel above");
}

Explanation explain_call(const SpecCall& call, int arch, cache::DiskCache& disk) {
  Explanation x;
  x.call = call;
  x.device = target_device(arch, &x.on_gpu);
  x.plan = op_tools(call["op"].get<std::string>()).plan(call, x.device, "auto");
  x.key_text = kernel_key_text(x.plan.spec, x.device.arch);
  const std::vector<cache::EntryInfo> entries = disk.list();
  for (const auto& info : entries)
    if (info.kind == kCubinKind && info.key_text == x.key_text) x.entry = info;
  // The runtime looks at the bundle first, so a hit there counts as cached too.
  if (std::string path = read_env_settings().cache_bundle; !path.empty()) {
    if (cache::Bundle(path).get(kCubinKind, x.key_text)) x.bundle = path;
  }
  if (!x.entry && x.bundle.empty()) {
    x.hints = miss_hints(entries, x.key_text);
    add_nominal_hint(x, entries);
  }
  return x;
}

std::string cache_status(const Explanation& x, const std::string& dir) {
  if (x.entry) {
    const cache::EntryMetadata& facts = x.entry->facts;
    return "cached in " + dir + ": " + cell(registers_of(facts)) + " registers, " +
           cell(spill_bytes_of(facts)) + " B spilled, " + std::to_string(x.entry->payload_size) +
           format(" B cubin, compiled in %.0f ms, ", facts.compile_ms.value_or(0.0)) +
           age_text(x.entry->mtime) + " ago";
  }
  if (!x.bundle.empty()) return "cached in the bundle " + x.bundle + " (KJIT_CACHE_BUNDLE)";
  return "not cached: no entry for this key in " + dir +
         "; the first call compiles it (or run `kjit precompile`)";
}

void print_explanation(const Explanation& x, const std::string& dir, bool as_json) {
  const std::string digest = kernel_key_digest(x.key_text);
  if (as_json) {
    ordered_json out = {{"call", x.call},
                        {"planned", x.plan.planned},
                        {"device", x.device.name},
                        {"on_gpu", x.on_gpu},
                        {"config", json::parse(x.plan.config_json)},
                        {"kernel", x.plan.spec.name_expression},
                        {"key", digest},
                        {"key_text", ordered_json::parse(x.key_text)},
                        {"cached", x.entry.has_value() || !x.bundle.empty()},
                        {"entry", x.entry ? json(x.entry->path) : json()},
                        {"bundle", x.bundle.empty() ? json() : json(x.bundle)},
                        {"hints", x.hints}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("call:     %s (planned as %s)\n", describe(x.call).c_str(),
              describe(x.plan.planned).c_str());
  std::printf("device:   %s%s, %d SMs\n", x.on_gpu ? "this GPU, " : "", x.device.name.c_str(),
              x.device.sm_count);
  std::printf("config:   %s\n", x.plan.config.c_str());
  std::printf("kernel:   %s\n", x.plan.spec.name_expression.c_str());
  std::printf("key:      %s\n", digest.c_str());
  std::printf("cache:    %s\n", cache_status(x, dir).c_str());
  for (const std::string& hint : x.hints) std::printf("hint:     %s\n", hint.c_str());
  if (!x.entry && x.bundle.empty() && x.hints.empty())
    std::printf("hint:     no entry holds this kernel for another arch, NVRTC version or source "
                "digest either\n");
}

void run_explain(const InspectFlags& flags) {
  const SpecCall call = call_of(flags.call);
  op_tools(call["op"].get<std::string>()).check(call);
  const int arch = flags.arch.empty() ? 0 : parse_arch(flags.arch, "--arch");
  auto disk = open_disk_cache(flags.cache_dir, false);
  print_explanation(explain_call(call, arch, *disk), disk->dir(), flags.json);
}

void run_inspect(const InspectFlags& flags) {
  if (flags.explain) return run_explain(flags);
  auto disk = open_disk_cache(flags.cache_dir, false);
  if (!flags.log_key.empty()) return print_log(*disk, flags.log_key);
  list_entries(*disk, flags.json);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  auto* command = app.add_subcommand(
      "inspect",
      "List the disk cache; --log KEY shows one entry; --explain maps a call to its key");
  auto* log =
      command->add_option("--log", flags->log_key, "print the entry whose key starts with KEY");
  auto* explain = command->add_flag(
      "--explain", flags->explain, "which kernel and key a call maps to, and whether it is cached");
  log->excludes(explain);
  // The call's description only means something to --explain.
  add_call_options(*command, flags->call, explain);
  command->add_option("--arch", flags->arch, "target, e.g. sm_90 (default: this GPU)")
      ->needs(explain);
  command->add_flag("--json", flags->json, "print JSON");
  add_cache_dir_option(*command, flags->cache_dir);
  command->callback([flags] { run_inspect(*flags); });
}

}  // namespace kjit::cli
