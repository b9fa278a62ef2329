// SPDX-License-Identifier: Apache-2.0
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "kjit/config.hpp"
#include "kjit/error.hpp"

namespace kjit {

bool KernelConfig::operator==(const KernelConfig& other) const noexcept {
  return algorithm == other.algorithm && pack == other.pack && threads == other.threads &&
         group == other.group && cluster == other.cluster && cluster_grid == other.cluster_grid &&
         staged == other.staged && peel == other.peel;
}

std::string KernelConfig::to_string() const {
  return std::string(kjit::to_string(algorithm)) + " pack=" + std::to_string(pack) +
         " threads=" + std::to_string(threads) + " group=" + std::to_string(group) +
         " cluster=" + std::to_string(cluster) +
         (cluster_grid == ClusterGrid::kPerRow ? " grid=per_row" : "") +
         (algorithm == Algorithm::kBlockSplit ? " staged=" + std::to_string(staged) : "") +
         (peel ? " peel" : "");
}

std::string KernelConfig::to_json() const {
  nlohmann::ordered_json json = {{"algorithm", kjit::to_string(algorithm)},
                                 {"pack", pack},
                                 {"threads", threads},
                                 {"group", group},
                                 {"cluster", cluster},
                                 {"cluster_grid", kjit::to_string(cluster_grid)}};
  if (algorithm == Algorithm::kBlockSplit) json["staged"] = staged;
  if (peel) json["peel"] = true;  // only when set: records of other configs read as before
  return json.dump();
}

namespace {

int int_field(const nlohmann::json& json, const char* name) {
  const auto& value = json.at(name);
  if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 1 << 20)
    throw Error(Status::kErrorInvalidArgument,
                std::string("kernel config JSON: '") + name + "' must be an integer in [0, 2^20]");
  return value.get<int>();
}

bool bool_field(const nlohmann::json& json, const char* name) {
  const auto& value = json.at(name);
  if (!value.is_boolean())
    throw Error(Status::kErrorInvalidArgument, std::string("kernel config JSON: '") + name + "' must be true or false");
  return value.get<bool>();
}

}  // namespace

KernelConfig KernelConfig::from_json(const std::string& text) {
  try {
    auto json = nlohmann::json::parse(text);
    KernelConfig config;
    config.algorithm = parse_algorithm(json.at("algorithm").get<std::string>());
    config.pack = int_field(json, "pack");
    config.threads = int_field(json, "threads");
    config.group = int_field(json, "group");
    config.cluster = int_field(json, "cluster");
    // Records written before the field existed were timed on the resident grid.
    if (json.contains("cluster_grid"))
      config.cluster_grid = parse_cluster_grid(json.at("cluster_grid").get<std::string>());
    if (json.contains("staged")) config.staged = int_field(json, "staged");
    if (json.contains("peel")) config.peel = bool_field(json, "peel");
    return config;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument,
                std::string("kernel config JSON is malformed: ") + e.what());
  }
}

bool TopkConfig::operator==(const TopkConfig& other) const noexcept {
  return pack == other.pack && threads == other.threads && unroll == other.unroll &&
         cluster == other.cluster && algorithm == other.algorithm;
}

std::string TopkConfig::to_string() const {
  return std::string("topk ") + kjit::to_string(algorithm) + " pack=" + std::to_string(pack) +
         " threads=" + std::to_string(threads) +
         (algorithm == TopkAlgorithm::kResident ? " packs=" : " unroll=") +
         std::to_string(unroll) + " cluster=" + std::to_string(cluster);
}

std::string TopkConfig::to_json() const {
  nlohmann::ordered_json json = {{"algorithm", kjit::to_string(algorithm)},
                                 {"pack", pack},
                                 {"threads", threads},
                                 {"unroll", unroll},
                                 {"cluster", cluster}};
  return json.dump();
}

TopkConfig TopkConfig::from_json(const std::string& text) {
  try {
    auto json = nlohmann::json::parse(text);
    TopkConfig config;
    config.pack = int_field(json, "pack");
    config.threads = int_field(json, "threads");
    config.unroll = int_field(json, "unroll");
    config.cluster = int_field(json, "cluster");
    config.algorithm = json.contains("algorithm")
                           ? parse_topk_algorithm(json.at("algorithm").get<std::string>())
                           : TopkAlgorithm::kStream;
    return config;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument,
                std::string("top-K config JSON is malformed: ") + e.what());
  }
}

bool AttentionConfig::operator==(const AttentionConfig& other) const noexcept {
  return warps == other.warps && problems == other.problems && stages == other.stages;
}

std::string AttentionConfig::to_string() const {
  return "attention warps=" + std::to_string(warps) + " problems=" + std::to_string(problems) +
         " stages=" + std::to_string(stages);
}

std::string AttentionConfig::to_json() const {
  nlohmann::ordered_json json = {{"warps", warps}, {"problems", problems}, {"stages", stages}};
  return json.dump();
}

AttentionConfig AttentionConfig::from_json(const std::string& text) {
  try {
    auto json = nlohmann::json::parse(text);
    AttentionConfig config;
    config.warps = int_field(json, "warps");
    config.problems = int_field(json, "problems");
    config.stages = int_field(json, "stages");
    return config;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument,
                std::string("attention config JSON is malformed: ") + e.what());
  }
}

std::size_t KernelConfigHash::operator()(const KernelConfig& config) const noexcept {
  std::size_t h = std::hash<int>()(static_cast<int>(config.algorithm));
  const int grid = static_cast<int>(config.cluster_grid);
  for (int field : {config.pack, config.threads, config.group, config.cluster, grid, config.staged})
    h = h * 1000003u ^ std::hash<int>()(field);
  return config.peel ? h * 1000003u ^ 1u : h;
}

}  // namespace kjit
