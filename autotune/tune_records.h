// SPDX-License-Identifier: Apache-2.0
// Tuning records: the winner (and the whole log) of tuning one problem class on one kind of
// device, kept in memory and in the disk cache ("tune" entries) so later processes reuse it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/env.h"
#include "runtime/ops/rowwise_problem.h"
#include "runtime/ops/topk_problem.h"

namespace kjit {
namespace cache {
class LayeredCache;
}

/// Canonical text of a tuning key: device signature (name, arch, SM count), op, dtypes, exact
/// cols, rows bucket, alignment class, and the kernel sources' digest and kjit's version (new
/// kernels deserve a new tuning).
std::string tuning_key_text(const DeviceProps& device, const RowwiseKey& key);

/// The same for a softmax_topk class: device signature, dtypes, exact cols, K bucket, rows
/// bucket, alignment class, sources and version.
std::string tuning_key_text(const DeviceProps& device, const TopkDispatchKey& key);

/// Thread-safe store of tuning winners (row-wise and top-K configs, under their own keys).
class TuneRecords {
 public:
  explicit TuneRecords(const EnvSettings& settings);
  ~TuneRecords();

  /// The recorded winner for this key, if any (memory, then bundle, then disk).
  std::optional<KernelConfig> find(const DeviceProps& device, const RowwiseKey& key);
  /// The full tuning log stored with this key's record, if any (for re-tuning incrementally).
  std::optional<std::string> find_log(const DeviceProps& device, const RowwiseKey& key);
  /// Records a winner with its full log (JSON text) and a one-line summary for `kjit inspect`;
  /// returns false when the disk did not take it.
  bool put(const DeviceProps& device, const RowwiseKey& key, const KernelConfig& winner,
           const std::string& log_json, const std::string& summary = {});

  /// The same three for softmax_topk classes.
  std::optional<TopkConfig> find(const DeviceProps& device, const TopkDispatchKey& key);
  std::optional<std::string> find_log(const DeviceProps& device, const TopkDispatchKey& key);
  bool put(const DeviceProps& device, const TopkDispatchKey& key, const TopkConfig& winner,
           const std::string& log_json, const std::string& summary = {});

 private:
  /// The winner's JSON text under the key text `text`: memory, then bundle, then disk.
  std::optional<std::string> find_winner(const std::string& text);
  /// The log stored under `text`, if any.
  std::optional<std::string> find_payload(const std::string& text);
  bool put_winner(const std::string& text, const std::string& winner_json,
                  const std::string& log_json, const std::string& summary, int arch);

  std::unique_ptr<cache::LayeredCache> disk_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> memory_;  ///< key text -> winner JSON
};

}  // namespace kjit
