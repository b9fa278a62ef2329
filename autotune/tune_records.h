// SPDX-License-Identifier: Apache-2.0
// Tuning records: the winner (and the whole log) of tuning one problem class on one kind of
// device, kept in memory and in the disk cache ("tune" entries) so later processes reuse it.
// Any op family's classes, each under its own key text.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "runtime/driver/context.h"
#include "runtime/env.h"
#include "runtime/log.h"

namespace kjit {
namespace cache {
class LayeredCache;
}

/// Thread-safe store of tuning winners.
class TuneRecords {
 public:
  explicit TuneRecords(const EnvSettings& settings);
  ~TuneRecords();

  /// Canonical text of a tuning class: the device signature (name, arch, SM count), the
  /// family's key fields, the kernel sources' digest and kjit's version (new kernels deserve a
  /// new tuning).
  template <typename Family>
  static std::string key_text(const DeviceProps& device, const typename Family::Key& key) {
    return class_text(device, Family::key_fields(key));
  }

  /// The recorded winner of a class, if any (memory, then bundle, then disk); a record whose
  /// winner does not parse is ignored.
  template <typename Family>
  std::optional<typename Family::Config> find(const DeviceProps& device,
                                              const typename Family::Key& key) {
    const std::optional<std::string> json = find_winner(key_text<Family>(device, key));
    if (!json) return std::nullopt;
    try {
      return Family::Config::from_json(*json);
    } catch (const std::exception& e) {
      log().warn("ignoring a tuning record without a usable winner: {}", e.what());
      return std::nullopt;
    }
  }

  /// The full tuning log stored with a class's record, if any (for re-tuning incrementally).
  std::optional<std::string> find_log(const std::string& class_key);

  /// Records a winner (config JSON) with its full log (JSON text) and a one-line summary for
  /// `kjit inspect`; returns false when the disk did not take it.
  bool put(const std::string& class_key, const std::string& winner_json,
           const std::string& log_json, const std::string& summary, int arch);

 private:
  static std::string class_text(const DeviceProps& device, const nlohmann::ordered_json& fields);
  /// The winner's JSON text under the key text `text`: memory, then bundle, then disk.
  std::optional<std::string> find_winner(const std::string& text);

  std::unique_ptr<cache::LayeredCache> disk_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> memory_;  ///< key text -> winner JSON
};

}  // namespace kjit
