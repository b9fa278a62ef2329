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

std::string tuning_key_text(const DeviceProps& device, const TopkDispatchKey& key) {
  nlohmann::ordered_json text = {{"kind", "tune"},
                                 {"device", device.name},
                                 {"arch", "sm_" + std::to_string(device.arch)},
                                 {"sms", device.sm_count},
                                 {"op", "softmax_topk"},
                                 {"in", to_string(key.in_dtype)},
                                 {"index", to_string(key.idx_dtype)},
                                 {"cols", key.cols},
                                 {"k_bucket", key.k_bucket},
                                 {"rows_bucket", key.rows_bucket},
                                 {"pack", key.max_pack},
                                 {"sources", embedded_sources_digest()},
                                 {"kjit", kjit_version()}};
  return text.dump();
}

TuneRecords::TuneRecords(const EnvSettings& settings)
    : disk_(cache::LayeredCache::from_settings(settings)) {}

TuneRecords::~TuneRecords() = default;

std::optional<std::string> TuneRecords::find_winner(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = memory_.find(text); found != memory_.end()) return found->second;
  }
  auto entry = disk_->get(kTuneKind, text);
  if (!entry) return std::nullopt;
  const auto winner = entry->metadata.find("winner");
  if (winner == entry->metadata.end()) {
    log().warn("ignoring a tuning record without a winner");
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_.emplace(text, winner->dump()).first->second;
}

bool TuneRecords::put_winner(const std::string& text, const std::string& winner_json,
                             const std::string& log_json, const std::string& summary, int arch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_[text] = winner_json;
  }
  nlohmann::json metadata = {{"winner", nlohmann::json::parse(winner_json)},
                             {"kernel", summary},
                             {"arch", arch}};
  return disk_->put(kTuneKind, text, log_json, metadata);
}

namespace {

/// A recorded winner parsed as Config; a record whose winner does not parse is ignored.
template <typename Config>
std::optional<Config> parsed_winner(const std::optional<std::string>& json) {
  if (!json) return std::nullopt;
  try {
    return Config::from_json(*json);
  } catch (const std::exception& e) {
    log().warn("ignoring a tuning record without a usable winner: {}", e.what());
    return std::nullopt;
  }
}

}  // namespace

std::optional<KernelConfig> TuneRecords::find(const DeviceProps& device, const RowwiseKey& key) {
  return parsed_winner<KernelConfig>(find_winner(tuning_key_text(device, key)));
}

std::optional<TopkConfig> TuneRecords::find(const DeviceProps& device, const TopkDispatchKey& key) {
  return parsed_winner<TopkConfig>(find_winner(tuning_key_text(device, key)));
}

std::optional<std::string> TuneRecords::find_payload(const std::string& text) {
  auto entry = disk_->get(kTuneKind, text);
  if (!entry) return std::nullopt;
  return entry->payload;
}

std::optional<std::string> TuneRecords::find_log(const DeviceProps& device, const RowwiseKey& key) {
  return find_payload(tuning_key_text(device, key));
}

std::optional<std::string> TuneRecords::find_log(const DeviceProps& device,
                                                 const TopkDispatchKey& key) {
  return find_payload(tuning_key_text(device, key));
}

bool TuneRecords::put(const DeviceProps& device, const RowwiseKey& key, const KernelConfig& winner,
                      const std::string& log_json, const std::string& summary) {
  return put_winner(tuning_key_text(device, key), winner.to_json(), log_json,
                    summary.empty() ? std::string(to_string(key.op)) + " tuning" : summary,
                    device.arch);
}

bool TuneRecords::put(const DeviceProps& device, const TopkDispatchKey& key,
                      const TopkConfig& winner, const std::string& log_json,
                      const std::string& summary) {
  return put_winner(tuning_key_text(device, key), winner.to_json(), log_json,
                    summary.empty() ? std::string("softmax_topk tuning") : summary, device.arch);
}

}  // namespace kjit
