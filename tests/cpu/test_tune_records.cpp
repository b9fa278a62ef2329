// SPDX-License-Identifier: Apache-2.0
// Tuning keys and records without a GPU: what the key holds, and a record's trip through disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/driver/nominal_device.h"
#include "autotune/tune_records.h"
#include "autotune/tuner.h"
#include "kjit/error.hpp"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_family.h"

using namespace kjit;

namespace {

std::string tuning_key_text(const DeviceProps& device, const RowwiseKey& key) {
  return TuneRecords::key_text<RowwiseFamily>(device, key);
}

std::string tuning_key_text(const DeviceProps& device, const TopkDispatchKey& key) {
  return TuneRecords::key_text<TopkFamily>(device, key);
}

RowwiseKey sample_key() {
  return {RowOp::kSoftmax, DType::kBF16, DType::kBF16, 32000, 10, 8};
}

std::string fresh_dir() {
  char pattern[] = "/tmp/kjit-tune-records-XXXXXX";
  const char* made = mkdtemp(pattern);
  REQUIRE(made != nullptr);
  return made;
}

}  // namespace

TEST_CASE("a tuning key names the device signature and the problem class") {
  const DeviceProps h100 = nominal_device(90);
  const std::string text = tuning_key_text(h100, sample_key());
  CHECK(text == tuning_key_text(h100, sample_key()));
  for (const char* part : {"\"arch\":\"sm_90\"", "\"sms\":132", "\"cols\":32000", "\"rows_bucket\":10",
                           "\"pack\":8", "\"in\":\"bf16\"", "\"op\":\"softmax\"", "\"sources\""})
    CHECK_MESSAGE(text.find(part) != std::string::npos, part);

  DeviceProps other = h100;
  other.sm_count = 114;  // an H100 PCIe tunes differently
  CHECK(tuning_key_text(other, sample_key()) != text);
  RowwiseKey wider = sample_key();
  wider.cols = 32001;
  CHECK(tuning_key_text(h100, wider) != text);
  RowwiseKey more_rows = sample_key();
  more_rows.rows_bucket = 11;
  CHECK(tuning_key_text(h100, more_rows) != text);
  RowwiseKey misaligned = sample_key();
  misaligned.max_pack = 1;
  CHECK(tuning_key_text(h100, misaligned) != text);
}

TEST_CASE("a tuning record survives the trip through the disk cache") {
  const std::string dir = fresh_dir();
  EnvSettings settings;
  settings.cache_dir = dir;
  settings.disk_cache = true;
  const DeviceProps device = nominal_device(90);
  const KernelConfig winner{Algorithm::kCluster, 8, 256, 256, 8};
  {
    TuneRecords records(settings);
    CHECK_FALSE(records.find<RowwiseFamily>(device, sample_key()).has_value());
    CHECK(records.put(tuning_key_text(device, sample_key()), winner.to_json(),
                      "{\"candidates\": []}", "softmax tuning", device.arch));
    CHECK(records.find<RowwiseFamily>(device, sample_key()) == winner);
    CHECK(records.find_log(tuning_key_text(device, sample_key())) == "{\"candidates\": []}");
  }
  TuneRecords later(settings);  // as a new process would
  CHECK(later.find<RowwiseFamily>(device, sample_key()) == winner);
  RowwiseKey other = sample_key();
  other.cols = 50257;
  CHECK_FALSE(later.find<RowwiseFamily>(device, other).has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a softmax_topk record has its own key (K bucket, index dtype) and survives the disk") {
  const std::string dir = fresh_dir();
  EnvSettings settings;
  settings.cache_dir = dir;
  settings.disk_cache = true;
  const DeviceProps device = nominal_device(90);
  const TopkDispatchKey key{DType::kF32, DType::kI64, 128256, 64, 0, 4};
  const std::string text = tuning_key_text(device, key);
  for (const char* part : {"\"op\":\"softmax_topk\"", "\"k_bucket\":64", "\"index\":\"i64\"",
                           "\"cols\":128256", "\"sources\""})
    CHECK_MESSAGE(text.find(part) != std::string::npos, part);
  TopkDispatchKey bigger_k = key;
  bigger_k.k_bucket = 128;
  CHECK(tuning_key_text(device, bigger_k) != text);
  TopkDispatchKey i32 = key;
  i32.idx_dtype = DType::kI32;
  CHECK(tuning_key_text(device, i32) != text);

  const TopkConfig winner{4, 512, 4, 8};
  {
    TuneRecords records(settings);
    CHECK_FALSE(records.find<TopkFamily>(device, key).has_value());
    CHECK(records.put(text, winner.to_json(), "{\"candidates\": []}", "top-K tuning", device.arch));
    CHECK(records.find<TopkFamily>(device, key) == winner);
  }
  TuneRecords later(settings);
  CHECK(later.find<TopkFamily>(device, key) == winner);
  CHECK_FALSE(later.find<TopkFamily>(device, bigger_k).has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a tuning log round-trips and lets a re-tune time only new candidates") {
  TuneReport<KernelConfig> report;
  report.problem_json = RowwiseFamily::describe(RowwiseFamily::problem_from_json(
      {{"op", "softmax"}, {"dtype", "bf16"}, {"rows", 1000}, {"cols", 32000}})).dump();
  report.heuristic = {Algorithm::kWarp, 8, 128, 32, 1};
  report.winner = {Algorithm::kBlockRegs, 8, 256, 256, 1};
  report.candidates = {{report.heuristic, "ok", {12.5, 12.0, 13.0, 25}},
                       {report.winner, "ok", {10.25, 10.0, 10.5, 25}},
                       {{Algorithm::kCluster, 8, 256, 256, 4}, "wrong: element 3", {}}};
  const auto parsed = TuneReport<KernelConfig>::candidates_from_json(report.to_json());
  REQUIRE(parsed.size() == 3);
  CHECK(parsed[1].config == report.winner);
  CHECK(parsed[1].timing.median_us == 10.25);
  CHECK(parsed[2].status == "wrong: element 3");

  // The space grew by one config: only that one is left to run.
  std::vector<TuneCandidate<KernelConfig>> now = {{report.heuristic}, {report.winner},
                                                   {{Algorithm::kCluster, 8, 256, 256, 4}},
                                                   {{Algorithm::kBlockSmem, 8, 512, 512, 1}}};
  CHECK(tuning_detail::reuse_previous(now, parsed) == 3);
  CHECK(now[0].reused);
  CHECK(now[1].timing.median_us == 10.25);
  CHECK(now[2].status == "wrong: element 3");  // a wrong answer stays rejected
  CHECK_FALSE(now[3].reused);
  CHECK(now[3].status == "ok");

  CHECK_THROWS_AS(TuneReport<KernelConfig>::candidates_from_json("{\"candidates\": [{\"config\": 1}]}"), Error);
}
