// SPDX-License-Identifier: Apache-2.0
// kjit.cache: the disk cache's maintenance (inspect, verify, prune, clear, export, import), one
// DiskCache call each, on a folder given or the environment's. Results travel as JSON text.
#include <chrono>
#include <memory>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nlohmann/json.hpp>

#include "cache/disk_cache.h"
#include "kjit/error.hpp"
#include "python/src/cache_tools.h"
#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "runtime/env.h"

namespace nb = nanobind;
using nlohmann::ordered_json;

namespace kjit::python {
namespace {

/// The folder given, else the environment's (KJIT_CACHE_DIR, XDG_CACHE_HOME, HOME).
std::unique_ptr<cache::DiskCache> open_cache(const std::string& given, bool for_writing) {
  const std::string dir = given.empty() ? read_env_settings().cache_dir : given;
  if (dir.empty())
    reject("cache_dir", "no cache folder (KJIT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)");
  // No size cap: maintenance does exactly what it is asked, nothing more.
  auto disk = std::make_unique<cache::DiskCache>(dir, 0);
  if (!disk->readable())
    throw Error(Status::kErrorCacheIo, "cache folder '" + dir + "' cannot be used");
  if (for_writing && !disk->writable())
    throw Error(Status::kErrorCacheIo, "cache folder '" + dir + "' is read-only");
  return disk;
}

std::string inspect(const std::string& dir) {
  LogFlush flush;
  auto disk = open_cache(dir, false);
  ordered_json entries = ordered_json::array();
  for (const cache::EntryInfo& info : disk->list()) {
    const auto age = std::chrono::system_clock::now() - info.mtime;
    entries.push_back({{"kind", info.kind},
                       {"key", ordered_json::parse(info.key_text, nullptr, false).is_discarded()
                                   ? ordered_json(info.key_text)
                                   : ordered_json::parse(info.key_text)},
                       {"metadata", info.metadata},
                       {"payload_bytes", info.payload_size},
                       {"age_s", std::chrono::duration<double>(age).count()},
                       {"path", info.path}});
  }
  return ordered_json{{"cache_dir", disk->dir()}, {"entries", entries}}.dump();
}

std::string verify(const std::string& dir) {
  LogFlush flush;
  auto disk = open_cache(dir, false);
  const cache::VerifyReport report = disk->verify();
  return ordered_json{{"cache_dir", disk->dir()}, {"checked", report.checked},
                      {"ok", report.ok},          {"removed", report.removed},
                      {"reasons", report.reasons}}
      .dump();
}

std::string prune(const std::string& dir, std::uint64_t max_bytes) {
  LogFlush flush;
  auto disk = open_cache(dir, true);
  const cache::PruneReport report = disk->prune(max_bytes);
  return ordered_json{{"cache_dir", disk->dir()}, {"removed", report.removed},
                      {"bytes_before", report.bytes_before}, {"bytes_after", report.bytes_after}}
      .dump();
}

std::size_t clear(const std::string& dir) {
  LogFlush flush;
  return open_cache(dir, true)->clear();
}

std::size_t export_bundle(const std::string& dir, const std::string& path) {
  LogFlush flush;
  return open_cache(dir, false)->export_bundle(path);
}

std::size_t import_bundle(const std::string& dir, const std::string& path) {
  LogFlush flush;
  return open_cache(dir, true)->import_bundle(path);
}

}  // namespace

void bind_cache_tools(nb::module_& m) {
  m.def("_cache_inspect", &inspect, nb::arg("cache_dir"));
  m.def("_cache_verify", &verify, nb::arg("cache_dir"));
  m.def("_cache_prune", &prune, nb::arg("cache_dir"), nb::arg("max_bytes"));
  m.def("_cache_clear", &clear, nb::arg("cache_dir"));
  m.def("_cache_export", &export_bundle, nb::arg("cache_dir"), nb::arg("path"));
  m.def("_cache_import", &import_bundle, nb::arg("cache_dir"), nb::arg("path"));
}

}  // namespace kjit::python
