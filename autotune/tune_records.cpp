// SPDX-License-Identifier: Apache-2.0
#include "autotune/tune_records.h"

#include <nlohmann/json.hpp>

#include "cache/layered_cache.h"
#include "kjit/error.hpp"
#include "runtime/compiler/embedded_sources.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/log.h"

namespace kjit {
namespace {

constexpr const char* kTuneKind = "tune";

}  // namespace

std::string tuning_key_text(const DeviceProps& device, const RowwiseKey& key) {
  nlohmann::ordered_json text = {{"kind", "tune"},
                                 {"device", device.name},
                                 {"arch", "sm_" + std::to_string(device.arch)},
                                 {"sms", device.sm_count},
                                 {"op", to_string(key.op)},
                                 {"in", to_string(key.in_dtype)},
                                 {"out", to_string(key.out_dtype)},
                                 {"cols", key.cols},
                                 {"rows_bucket", key.rows_bucket},
                                 {"pack", key.max_pack},
                                 {"sources", embedded_sources_digest()},
                                 {"kjit", kjit_version()}};
  return text.dump();
}

TuneRecords::TuneRecords(const EnvSettings& settings)
    : disk_(cache::LayeredCache::from_settings(settings)) {}

TuneRecords::~TuneRecords() = default;

std::optional<KernelConfig> TuneRecords::find(const DeviceProps& device, const RowwiseKey& key) {
  const std::string text = tuning_key_text(device, key);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = memory_.find(text); found != memory_.end()) return found->second;
  }
  auto entry = disk_->get(kTuneKind, text);
  if (!entry) return std::nullopt;
  try {
    const KernelConfig winner = KernelConfig::from_json(entry->metadata.at("winner").dump());
    std::lock_guard<std::mutex> lock(mutex_);
    memory_.emplace(text, winner);
    return winner;
  } catch (const std::exception& e) {
    log().warn("ignoring a tuning record without a usable winner: {}", e.what());
    return std::nullopt;
  }
}

std::optional<std::string> TuneRecords::find_log(const DeviceProps& device, const RowwiseKey& key) {
  auto entry = disk_->get(kTuneKind, tuning_key_text(device, key));
  if (!entry) return std::nullopt;
  return entry->payload;
}

bool TuneRecords::put(const DeviceProps& device, const RowwiseKey& key, const KernelConfig& winner,
                      const std::string& log_json, const std::string& summary) {
  const std::string text = tuning_key_text(device, key);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_[text] = winner;
  }
  nlohmann::json metadata = {{"winner", nlohmann::json::parse(winner.to_json())},
                             {"kernel", summary.empty() ? std::string(to_string(key.op)) + " tuning" : summary},
                             {"arch", device.arch}};
  return disk_->put(kTuneKind, text, log_json, metadata);
}

}  // namespace kjit
