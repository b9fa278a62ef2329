// SPDX-License-Identifier: Apache-2.0
// The C API's runtime set-up and tools: version, options, creation, warm-up, explain, logging.
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kjit/kjit.h"
#include "runtime/bounded_json.h"
#include "runtime/c_api_guard.h"
#include "runtime/log.h"
#include "runtime/op_tools.h"

using kjit::c_api::guarded;
using kjit::c_api::runtime_of;

namespace {

[[noreturn]] void reject(const std::string& what) {
  throw kjit::Error(kjit::Status::kErrorInvalidArgument, what);
}

/// `options` as the C struct; its strings point into `strings`, which must outlive it.
kjit_options to_c(const kjit::RuntimeOptions& options, std::string (&strings)[3]) {
  strings[0] = options.cache_dir;
  strings[1] = options.cache_bundle;
  strings[2] = options.log_level;
  kjit_options c{};
  c.size = sizeof(kjit_options);
  c.cache_dir = strings[0].c_str();
  c.cache_bundle = strings[1].c_str();
  c.disk_cache = options.disk_cache;
  c.jit = options.jit;
  c.tune = static_cast<kjit_tune_mode>(options.tune);
  c.log_level = strings[2].c_str();
  c.cache_max_bytes = options.cache_max_bytes;
  c.dependent_launch = options.dependent_launch;
  return c;
}

/// The caller's struct over the defaults: fields past its `size` (an older header) keep theirs.
kjit::RuntimeOptions from_c(const kjit_options* given) {
  if (given == nullptr) reject("options is null");
  constexpr std::size_t kSmallest = offsetof(kjit_options, cache_dir) + sizeof(const char*);
  if (given->size < kSmallest || given->size > sizeof(kjit_options))
    reject("options->size (" + std::to_string(given->size) + ") is not a kjit_options size (" +
           std::to_string(kSmallest) + " to " + std::to_string(sizeof(kjit_options)) +
           "); set it to sizeof(kjit_options)");
  std::string defaults_strings[3];
  kjit_options c = to_c(kjit::RuntimeOptions{}, defaults_strings);
  std::memcpy(&c, given, given->size);
  const int tune = kjit::c_api::enum_value(c.tune);
  if (tune < static_cast<int>(KJIT_TUNE_OFF) || tune > static_cast<int>(KJIT_TUNE_FIRST_USE))
    reject("options->tune (" + std::to_string(tune) + ") is not a kjit_tune_mode");
  kjit::RuntimeOptions options;
  options.cache_dir = c.cache_dir ? c.cache_dir : "";
  options.cache_bundle = c.cache_bundle ? c.cache_bundle : "";
  options.disk_cache = c.disk_cache != 0 && !options.cache_dir.empty();
  options.jit = c.jit != 0;
  options.tune = static_cast<kjit::TuneMode>(tune);
  options.log_level = c.log_level ? c.log_level : "";
  options.cache_max_bytes = c.cache_max_bytes;
  options.dependent_launch = c.dependent_launch != 0;
  return options;
}

nlohmann::json parse_call(const char* call) {
  if (call == nullptr) reject("call is null");
  // The reason, not the whole text: a call can be megabytes, and "not an object" was also said
  // of an object holding 1e400.
  std::string problem;
  const std::optional<nlohmann::json> document = kjit::parse_json_bounded(call, problem);
  if (!document) reject("call: not valid JSON: " + problem);
  nlohmann::json parsed = *document;
  if (!parsed.is_object()) reject("call: must be a JSON object, not a " + std::string(parsed.type_name()));
  if (!parsed.contains("op") || !parsed["op"].is_string()) reject("call: no \"op\" string");
  return parsed;
}

nlohmann::ordered_json prepare(kjit_runtime* rt, const char* call) {
  kjit::Runtime& runtime = runtime_of(rt);
  const nlohmann::json parsed = parse_call(call);
  return kjit::op_tools(parsed["op"].get<std::string>()).prepare(runtime, parsed);
}

/// A C callback with its user data, behind the logger's C++ callback.
struct CCallback {
  kjit_log_callback callback;
  void* user_data;
};

void forward_line(int level, const char* message, void* target) {
  // kjit_log_level values are spdlog's level numbers.
  const auto* c = static_cast<const CCallback*>(target);
  c->callback(static_cast<kjit_log_level>(level), message, c->user_data);
}

}  // namespace

extern "C" {

const char* kjit_version(void) { return KJIT_VERSION_STRING; }

kjit_status kjit_options_from_environment(kjit_options* options) {
  return guarded([&] {
    if (options == nullptr) reject("options is null");
    thread_local std::string strings[3];
    *options = to_c(kjit::RuntimeOptions::from_environment(), strings);
  });
}

kjit_status kjit_runtime_create(kjit_runtime** rt) {
  return guarded([&] {
    if (rt == nullptr) reject("rt is null");
    *rt = new kjit_runtime{};
  });
}

kjit_status kjit_runtime_create_with_options(kjit_runtime** rt, const kjit_options* options) {
  return guarded([&] {
    if (rt == nullptr) reject("rt is null");
    *rt = new kjit_runtime{kjit::Runtime(from_c(options))};
  });
}

void kjit_runtime_destroy(kjit_runtime* rt) { delete rt; }

kjit_status kjit_prepare(kjit_runtime* rt, const char* call) {
  return guarded([&] { prepare(rt, call); });
}

kjit_status kjit_explain(kjit_runtime* rt, const char* call, char* report, size_t capacity,
                         size_t* length) {
  return guarded([&] {
    if (report == nullptr && capacity > 0) reject("report is null");
    const std::string text = prepare(rt, call).dump();
    if (length != nullptr) *length = text.size();
    if (capacity == 0) return;
    const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(report, text.data(), n);
    report[n] = '\0';
  });
}

void kjit_set_log_callback(kjit_log_callback callback, void* user_data) {
  static std::mutex mutex;
  static std::unique_ptr<CCallback> current;
  std::lock_guard<std::mutex> guard(mutex);
  auto next = callback ? std::make_unique<CCallback>(CCallback{callback, user_data}) : nullptr;
  kjit::set_log_callback(next ? forward_line : nullptr, next.get());
  // The sink switched under its lock, so no line is still being handed to the previous one.
  current = std::move(next);
}

}  // extern "C"
