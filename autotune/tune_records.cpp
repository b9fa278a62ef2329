// SPDX-License-Identifier: Apache-2.0
#include "autotune/tune_records.h"

#include "cache/layered_cache.h"
#include "kjit/error.hpp"
#include "runtime/compiler/embedded_sources.h"
#include "runtime/compiler/kernel_key.h"

namespace kjit {
namespace {

constexpr const char* kTuneKind = "tune";

}  // namespace

TuneRecords::TuneRecords(const EnvSettings& settings)
    : disk_(cache::LayeredCache::from_settings(settings)) {}

TuneRecords::~TuneRecords() = default;

std::string TuneRecords::class_text(const DeviceProps& device,
                                    const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json text = {{"kind", "tune"},
                                 {"device", device.name},
                                 {"arch", "sm_" + std::to_string(device.arch)},
                                 {"sms", device.sm_count}};
  for (auto field = fields.begin(); field != fields.end(); ++field) text[field.key()] = field.value();
  text["sources"] = embedded_sources_digest();
  text["kjit"] = kjit_version();
  return text.dump();
}

std::optional<std::string> TuneRecords::find_winner(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = memory_.find(text); found != memory_.end()) return found->second;
  }
  auto entry = disk_->get(kTuneKind, text);
  if (!entry) return std::nullopt;
  if (!entry->facts.winner) {
    log().warn("ignoring a tuning record without a winner");
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_.emplace(text, entry->facts.winner->dump()).first->second;
}

std::optional<std::string> TuneRecords::find_log(const std::string& class_key) {
  auto entry = disk_->get(kTuneKind, class_key);
  if (!entry) return std::nullopt;
  return entry->payload;
}

bool TuneRecords::put(const std::string& class_key, const std::string& winner_json,
                      const std::string& log_json, const std::string& summary, int arch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_[class_key] = winner_json;
  }
  nlohmann::json metadata = {{"winner", nlohmann::json::parse(winner_json)},
                             {"kernel", summary},
                             {"arch", arch}};
  return disk_->put(kTuneKind, class_key, log_json, metadata);
}

}  // namespace kjit
