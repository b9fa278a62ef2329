// SPDX-License-Identifier: Apache-2.0
// KernelConfig as a value type: the unit of tuning and caching must compare, hash, print and
// survive a JSON round trip unchanged, and malformed JSON must be refused, never guessed at.
#include <doctest/doctest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "kjit/kjit.hpp"

using namespace kjit;

namespace {

std::vector<KernelConfig> sample_configs() {
  return {
      {Algorithm::kAuto, 0, 0, 0, 0},
      {Algorithm::kWarp, 4, 128, 32, 1},
      {Algorithm::kWarp, 4, 128, 16, 1},
      {Algorithm::kBlockRegs, 8, 1024, 1024, 1},
      {Algorithm::kBlockSmem, 2, 512, 512, 1},
      {Algorithm::kBlockOnline, 1, 256, 256, 1},
      {Algorithm::kCluster, 4, 1024, 1024, 8},
      {Algorithm::kCluster, 4, 1024, 1024, 16},
      {Algorithm::kClusterSmem, 8, 512, 512, 4},
      {Algorithm::kClusterSmem, 8, 512, 512, 4, ClusterGrid::kPerRow},
      {Algorithm::kCluster, 4, 1024, 1024, 8, ClusterGrid::kPerRow},
      {Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 6},
      {Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 7},
      {Algorithm::kWarp, 4, 128, 32, 1, ClusterGrid::kResident, 0, true},
      {Algorithm::kBlockRegs, 8, 1024, 1024, 1, ClusterGrid::kResident, 0, true},
  };
}

Status from_json_status(const std::string& text) {
  try {
    KernelConfig::from_json(text);
  } catch (const Error& error) {
    return error.status();
  }
  return Status::kSuccess;
}

}  // namespace

TEST_CASE("equality compares every field") {
  const KernelConfig base{Algorithm::kWarp, 4, 128, 32, 1};
  CHECK(base == KernelConfig{Algorithm::kWarp, 4, 128, 32, 1});
  CHECK_FALSE(base != KernelConfig{Algorithm::kWarp, 4, 128, 32, 1});
  CHECK(base != KernelConfig{Algorithm::kBlockRegs, 4, 128, 32, 1});
  CHECK(base != KernelConfig{Algorithm::kWarp, 2, 128, 32, 1});
  CHECK(base != KernelConfig{Algorithm::kWarp, 4, 256, 32, 1});
  CHECK(base != KernelConfig{Algorithm::kWarp, 4, 128, 16, 1});
  CHECK(base != KernelConfig{Algorithm::kWarp, 4, 128, 32, 2});
  CHECK(KernelConfig{Algorithm::kCluster, 4, 512, 512, 4} !=
        KernelConfig{Algorithm::kCluster, 4, 512, 512, 4, ClusterGrid::kPerRow});
  CHECK(KernelConfig{Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 6} !=
        KernelConfig{Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 5});
  CHECK(KernelConfig{} == KernelConfig{Algorithm::kAuto, 0, 0, 0, 0});
  CHECK(base != KernelConfig{Algorithm::kWarp, 4, 128, 32, 1, ClusterGrid::kResident, 0, true});
}

TEST_CASE("hash agrees with equality and spreads") {
  const KernelConfigHash hash;
  const auto configs = sample_configs();
  for (const KernelConfig& config : configs) {
    KernelConfig copy = config;
    CHECK(hash(copy) == hash(config));
  }
  std::unordered_set<std::size_t> hashes;
  for (const KernelConfig& config : configs) hashes.insert(hash(config));
  CHECK(hashes.size() == configs.size());

  std::unordered_set<KernelConfig, KernelConfigHash> set(configs.begin(), configs.end());
  set.insert(KernelConfig{Algorithm::kWarp, 4, 128, 32, 1});
  CHECK(set.size() == configs.size());
}

TEST_CASE("to_string spells every field") {
  CHECK(KernelConfig{Algorithm::kWarp, 4, 128, 32, 1}.to_string() ==
        "warp pack=4 threads=128 group=32 cluster=1");
  CHECK(KernelConfig{Algorithm::kCluster, 2, 512, 512, 8}.to_string() ==
        "cluster pack=2 threads=512 group=512 cluster=8");
  CHECK(KernelConfig{Algorithm::kClusterSmem, 4, 512, 512, 4, ClusterGrid::kPerRow}.to_string() ==
        "cluster_smem pack=4 threads=512 group=512 cluster=4 grid=per_row");
  CHECK(KernelConfig{Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 6}.to_string() ==
        "block_split pack=8 threads=512 group=512 cluster=1 staged=6");
  CHECK(KernelConfig{Algorithm::kWarp, 8, 128, 16, 1, ClusterGrid::kResident, 0, true}.to_string() ==
        "warp pack=8 threads=128 group=16 cluster=1 peel");
}

TEST_CASE("JSON round trip") {
  for (const KernelConfig& config : sample_configs()) {
    const std::string json = config.to_json();
    CAPTURE(json);
    CHECK(json.find('\n') == std::string::npos);  // compact: one line in logs and records
    CHECK(json.find(std::string("\"") + to_string(config.algorithm) + "\"") != std::string::npos);
    CHECK(KernelConfig::from_json(json) == config);
  }
  // Key order and whitespace are not part of the format.
  CHECK(KernelConfig::from_json(
            " { \"cluster\": 1, \"group\": 32, \"threads\": 128, \"pack\": 4,\n"
            "   \"algorithm\": \"warp\" } ") == KernelConfig{Algorithm::kWarp, 4, 128, 32, 1});
  // Records from before the grid was a choice were timed on the resident grid.
  const char* before_grids = R"({"algorithm":"cluster","pack":4,"threads":512,"group":512,"cluster":4})";
  CHECK(KernelConfig::from_json(before_grids) ==
        KernelConfig{Algorithm::kCluster, 4, 512, 512, 4, ClusterGrid::kResident});
  // Only block_split writes its staged packs, so the other algorithms' records read as before.
  CHECK(KernelConfig{Algorithm::kWarp, 4, 128, 32, 1}.to_json().find("staged") == std::string::npos);
  CHECK(KernelConfig{Algorithm::kBlockSplit, 8, 512, 512, 1, ClusterGrid::kResident, 6}.to_json().find(
            "\"staged\":6") != std::string::npos);
  // Only peeled configs write "peel", so records and cache keys of the others read as before.
  CHECK(KernelConfig{Algorithm::kWarp, 4, 128, 32, 1}.to_json() ==
        R"({"algorithm":"warp","pack":4,"threads":128,"group":32,"cluster":1,"cluster_grid":"resident"})");
  CHECK(KernelConfig{Algorithm::kWarp, 4, 128, 32, 1, ClusterGrid::kResident, 0, true}.to_json().find(
            "\"peel\":true") != std::string::npos);
  CHECK(from_json_status(R"({"algorithm":"warp","pack":4,"threads":128,"group":32,"cluster":1,"peel":1})") ==
        Status::kErrorInvalidArgument);
}

TEST_CASE("from_json rejects malformed text") {
  const char* bad[] = {
      "",
      "{",
      "not json",
      "null",
      "42",
      "[]",
      "{}",
      R"({"algorithm":"warp","pack":4,"threads":128,"group":32})",                 // missing cluster
      R"({"algorithm":"warpish","pack":4,"threads":128,"group":32,"cluster":1})",  // unknown name
      R"({"algorithm":3,"pack":4,"threads":128,"group":32,"cluster":1})",          // not a name
      R"({"algorithm":"warp","pack":"four","threads":128,"group":32,"cluster":1})",
      R"({"algorithm":"warp","pack":4,"threads":128,"group":32,"cluster":1)",      // unterminated
      R"({"algorithm":"warp","pack":4,"threads":128,"group":32,"cluster":1} x)",   // trailing text
      R"({"algorithm":"cluster","pack":4,"threads":512,"group":512,"cluster":4,"cluster_grid":"rows"})",
      R"({"algorithm":"cluster","pack":4,"threads":512,"group":512,"cluster":4,"cluster_grid":1})",
  };
  for (const char* text : bad) {
    const std::string shown = text;
    CAPTURE(shown);
    CHECK(from_json_status(text) == Status::kErrorInvalidArgument);
  }
}

TEST_CASE("from_json rejects numbers that are not ints") {
  // A tuning record with 4.5 or 1e10 threads is corrupt; silently truncating it would run a
  // kernel nobody chose.
  const char* bad[] = {
      R"({"algorithm":"warp","pack":4.5,"threads":128,"group":32,"cluster":1})",
      R"({"algorithm":"warp","pack":4,"threads":1e10,"group":32,"cluster":1})",
  };
  for (const char* text : bad) {
    const std::string shown = text;
    CAPTURE(shown);
    CHECK(from_json_status(text) == Status::kErrorInvalidArgument);
  }
}

TEST_CASE("a top-K config round-trips through JSON, and malformed text is refused") {
  for (TopkAlgorithm algorithm :
       {TopkAlgorithm::kAuto, TopkAlgorithm::kStream, TopkAlgorithm::kResident}) {
    const TopkConfig config{4, 512, 4, 8, algorithm};
    const std::string json = config.to_json();
    CHECK(json.find('\n') == std::string::npos);
    CHECK(TopkConfig::from_json(json) == config);
  }
  // Records written before the resident kernel name no algorithm: they were stream configs.
  CHECK(TopkConfig::from_json(R"({"cluster":2,"unroll":8,"threads":256,"pack":8})") ==
        TopkConfig{8, 256, 8, 2, TopkAlgorithm::kStream});
  CHECK(TopkConfig{8, 256, 8, 2, TopkAlgorithm::kStream} !=
        TopkConfig{8, 256, 8, 2, TopkAlgorithm::kResident});
  for (const char* text : {"", "{}", "[]", R"({"pack":4,"threads":512,"unroll":4})",
                           R"({"pack":4,"threads":512,"unroll":4.5,"cluster":8})",
                           R"({"pack":4,"threads":"512","unroll":4,"cluster":8})",
                           R"({"algorithm":"radix","pack":4,"threads":512,"unroll":4,"cluster":8})",
                           R"({"algorithm":2,"pack":4,"threads":512,"unroll":4,"cluster":8})"}) {
    const std::string shown = text;
    CAPTURE(shown);
    Status status = Status::kSuccess;
    try {
      TopkConfig::from_json(text);
    } catch (const Error& error) {
      status = error.status();
    }
    CHECK(status == Status::kErrorInvalidArgument);
  }
}
