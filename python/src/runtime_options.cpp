// SPDX-License-Identifier: Apache-2.0
// kjit.Runtime(**options): every RuntimeOptions field by name; what is not given comes from the
// environment, as kjit::Runtime() reads it.
#include <string>

#include <nanobind/stl/string.h>

#include "python/src/errors.h"
#include "python/src/py_runtime.h"
#include "runtime/env.h"

namespace nb = nanobind;

namespace kjit::python {
namespace {

constexpr const char* kNames =
    "cache_dir, cache_bundle, disk_cache, jit, tune, log_level, cache_max_bytes, dependent_launch";

bool flag(const char* name, nb::handle value) {
  if (!nb::isinstance<nb::bool_>(value)) reject(name, "expected True or False");
  return nb::cast<bool>(value);
}

/// A path (str or os.PathLike) or None (empty).
std::string path_text(const char* name, nb::handle value) {
  if (value.is_none()) return {};
  nb::object os = nb::module_::import_("os");
  try {
    return nb::cast<std::string>(os.attr("fspath")(value));
  } catch (const std::exception&) {
    reject(name, "expected a path (str or os.PathLike) or None");
  }
}

std::string text(const char* name, nb::handle value) {
  if (!nb::isinstance<nb::str>(value)) reject(name, "expected a string");
  return nb::cast<std::string>(value);
}

TuneMode tune_mode(nb::handle value) {
  std::string mode = text("tune", value);
  for (char& c : mode)
    if (c == '_') c = '-';
  if (auto parsed = parse_tune_mode(mode)) return *parsed;
  reject("tune", "'" + mode + "' is not one of off, cached, first-use");
}

std::uint64_t byte_size(nb::handle value) {
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value)) {
    const long long bytes = nb::cast<long long>(value);
    if (bytes < 0) reject("cache_max_bytes", "must be >= 0");
    return static_cast<std::uint64_t>(bytes);
  }
  if (nb::isinstance<nb::str>(value))
    if (auto parsed = parse_byte_size(nb::cast<std::string>(value))) return *parsed;
  reject("cache_max_bytes", "expected a byte count or a size such as '500M' or '2G'");
}

const char* tune_name(TuneMode mode) {
  switch (mode) {
    case TuneMode::kOff: return "off";
    case TuneMode::kCached: return "cached";
    case TuneMode::kFirstUse: return "first-use";
  }
  return "?";
}

}  // namespace

RuntimeOptions options_from_kwargs(const nb::kwargs& kwargs) {
  RuntimeOptions options = RuntimeOptions::from_environment();
  bool disk_given = false, dir_given = false;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "cache_dir") {
      options.cache_dir = path_text("cache_dir", value);
      dir_given = true;
    } else if (name == "cache_bundle") {
      options.cache_bundle = path_text("cache_bundle", value);
    } else if (name == "disk_cache") {
      options.disk_cache = flag("disk_cache", value);
      disk_given = true;
    } else if (name == "jit") {
      options.jit = flag("jit", value);
    } else if (name == "tune") {
      options.tune = tune_mode(value);
    } else if (name == "log_level") {
      options.log_level = value.is_none() ? std::string() : text("log_level", value);
    } else if (name == "cache_max_bytes") {
      options.cache_max_bytes = byte_size(value);
    } else if (name == "dependent_launch") {
      options.dependent_launch = flag("dependent_launch", value);
    } else {
      reject(name.c_str(), std::string("is not a runtime option (") + kNames + ")");
    }
  }
  // A folder named here turns the disk cache on, unless disk_cache=False says otherwise.
  if (dir_given && !disk_given) options.disk_cache = !options.cache_dir.empty();
  if (options.cache_dir.empty()) options.disk_cache = false;
  return options;
}

nb::dict options_dict(const RuntimeOptions& options) {
  nb::dict out;
  out["cache_dir"] = options.cache_dir;
  out["cache_bundle"] = options.cache_bundle;
  out["disk_cache"] = options.disk_cache;
  out["jit"] = options.jit;
  out["tune"] = tune_name(options.tune);
  out["log_level"] = options.log_level;
  out["cache_max_bytes"] = options.cache_max_bytes;
  out["dependent_launch"] = options.dependent_launch;
  return out;
}

}  // namespace kjit::python
