// SPDX-License-Identifier: Apache-2.0
// The cache commands of the `kjit` binary, run as a user would: precompile fills a fresh cache
// folder, inspect shows it, cache verify/prune/export/import maintain it, bad input is refused.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace cli_test;

/// 2 ops x 2 dtypes x 2 widths x 1 row count: 8 kernels per arch, all distinct.
constexpr const char* kSmallSpec =
    R"({"ops": ["softmax", "log_softmax"], "dtypes": ["f32", "bf16"], "cols": [128, 4096],
        "rows": [64]})";
constexpr int kKernelsPerArch = 8;

/// The number before `label` on precompile's summary line, e.g. "16 kernels ...: 16 compiled".
int summary_count(const std::string& output, const std::string& label) {
  const std::size_t line = output.rfind(" kernels (");
  REQUIRE(line != std::string::npos);
  const std::size_t at = output.find(" " + label, line);
  REQUIRE(at != std::string::npos);
  std::size_t start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(output[start - 1]))) --start;
  REQUIRE(start < at);
  return std::stoi(output.substr(start, at - start));
}

Result precompile(const std::string& cache, const std::string& spec) {
  return run_kjit("precompile --arch sm_80,sm_90 --spec " + spec + " --cache-dir " + cache);
}

/// Sorted key digests that `kjit inspect --json` lists.
std::vector<std::string> listed_keys(const std::string& cache) {
  const Result listed = run_kjit("inspect --json --cache-dir " + cache);
  REQUIRE(listed.code == 0);
  std::vector<std::string> keys;
  for (const auto& entry : nlohmann::json::parse(listed.output)) keys.push_back(entry.at("key"));
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<fs::path> entry_files(const std::string& cache) {
  std::vector<fs::path> files;
  for (const auto& item : fs::recursive_directory_iterator(cache))
    if (item.is_regular_file() && item.path().extension() == ".bin") files.push_back(item.path());
  std::sort(files.begin(), files.end());
  return files;
}

void flip_middle_byte(const fs::path& file) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  const auto middle = static_cast<std::streamoff>(fs::file_size(file) / 2);
  char byte = 0;
  stream.seekg(middle);
  stream.get(byte);
  stream.seekp(middle);
  stream.put(static_cast<char>(byte ^ 0x5a));
}

}  // namespace

TEST_CASE("precompile fills the cache named by --cache-dir; a second run compiles nothing") {
  TempDir dir;
  const std::string cache = dir / "cache", elsewhere = dir / "elsewhere";
  const std::string spec = write_file(dir, "spec.json", kSmallSpec);

  // --cache-dir wins over KJIT_CACHE_DIR, and KJIT_DISK_CACHE=0 (ctest sets it) does not apply.
  const Result first =
      run_kjit("precompile --arch sm_80,sm_90 --spec " + spec + " --cache-dir " + cache,
           "KJIT_CACHE_DIR=" + elsewhere);
  INFO(first.output);
  REQUIRE(first.code == 0);
  CHECK(summary_count(first.output, "compiled") == 2 * kKernelsPerArch);
  CHECK(summary_count(first.output, "already cached") == 0);
  CHECK(contains(first.output, "compiled kjit::warp<"));
  CHECK(contains(first.output, "compiled kjit::block_regs<"));
  CHECK(contains(first.output, "[16/16] "));
  CHECK(entry_files(cache).size() == 2 * kKernelsPerArch);
  CHECK_FALSE(fs::exists(elsewhere));

  const Result listed = run_kjit("inspect --cache-dir " + cache);
  CHECK(listed.code == 0);
  CHECK(contains(listed.output, "16 entries"));
  CHECK(contains(listed.output, "sm_80"));
  CHECK(contains(listed.output, "sm_90"));
  CHECK(contains(listed.output, "kjit::block_regs<1, kjit::Io<kjit::bf16, kjit::bf16>, 4096"));

  const Result second = precompile(cache, spec);
  INFO(second.output);
  REQUIRE(second.code == 0);
  CHECK(summary_count(second.output, "compiled") == 0);
  CHECK(summary_count(second.output, "already cached") == 2 * kKernelsPerArch);
}

TEST_CASE("precompile builds the softmax_topk kernels of a spec, one per K bucket") {
  TempDir dir;
  const std::string cache = dir / "cache";
  // k 50 and 64 share the K bucket 64, k 1 has bucket 32: two top-K kernels per index dtype.
  const std::string spec = write_file(dir, "topk.json", R"({"ops": ["softmax_topk"], "cols": [32000],
      "rows": [8], "k": [1, 50, 64], "index_dtypes": ["i32", "i64"]})");
  const Result first = run_kjit("precompile --arch sm_90 --spec " + spec + " --cache-dir " + cache);
  INFO(first.output);
  REQUIRE(first.code == 0);
  CHECK(summary_count(first.output, "compiled") == 4);
  CHECK(contains(first.output, "(6 calls)"));
  CHECK(contains(first.output, "kjit::topk_resident<float, int, 32000, 32,"));
  CHECK(contains(first.output, "kjit::topk_resident<float, long long, 32000, 64,"));
  const Result second = run_kjit("precompile --arch sm_90 --spec " + spec + " --cache-dir " + cache);
  CHECK(summary_count(second.output, "already cached") == 4);
  CHECK(contains(run_kjit("inspect --cache-dir " + cache).output, "4 entries"));

  // A call of the class (k 40 and 5 rows plan as their buckets' 64 and 8) finds what precompile
  // stored; a k of another bucket does not.
  const std::string call = "inspect --explain --op softmax_topk --k 40 --cols 32000 --rows 5 "
                           "--arch sm_90 --cache-dir " + cache;
  const Result hit = run_kjit(call + " --index-dtype i32");
  INFO(hit.output);
  CHECK(hit.code == 0);
  CHECK(contains(hit.output, "rows=8 cols=32000 k=64)"));
  CHECK(contains(hit.output, "kjit::topk_resident<float, int, 32000, 64,"));
  CHECK(contains(hit.output, "cached in"));
  const Result json_hit = run_kjit(call + " --index-dtype i32 --json");
  CHECK(nlohmann::json::parse(json_hit.output).at("cached") == true);
  CHECK(nlohmann::json::parse(json_hit.output).at("planned").at("k") == 64);
  const Result other_bucket = run_kjit("inspect --explain --op softmax_topk --k 100 --cols 32000 --rows 5 "
                                   "--arch sm_90 --cache-dir " + cache);
  CHECK(contains(other_bucket.output, "kjit::topk_resident<float, long long, 32000, 128,"));
  CHECK(contains(other_bucket.output, "not cached"));
  const Result k_missing = run_kjit("inspect --explain --op softmax_topk --cols 32000 --arch sm_90 --cache-dir " + cache);
  CHECK(k_missing.code == 2);
  CHECK(contains(k_missing.output, "k: is required"));
}

TEST_CASE("kjit tune --op softmax_topk names a bad --k or --index-dtype before needing a GPU") {
  TempDir dir;
  const std::string cache = " --cache-dir " + (dir / "cache");
  for (const char* k : {"0", "1001", "5000"}) {
    const Result result = run_kjit(std::string("tune --op softmax_topk --cols 1000 --k ") + k + cache);
    INFO(result.output);
    CHECK(result.code == 2);
    CHECK((contains(result.output, "k: must be in 1..4096") ||
           contains(result.output, "k (1001) is larger than cols (1000)")));
  }
  const Result index = run_kjit("tune --op softmax_topk --cols 1000 --k 5 --index-dtype f32" + cache);
  INFO(index.output);
  CHECK(index.code == 2);
  CHECK(contains(index.output, "idx_dtype: f32 is not supported; expected i32 or i64"));
}

TEST_CASE("softmax_topk spec entries name what is wrong with them") {
  TempDir dir;
  auto refused = [&](const std::string& text, const std::string& message) {
    const Result result = precompile(dir / "cache", write_file(dir, "spec.json", text));
    INFO(result.output);
    CHECK(result.code == 2);
    CHECK(contains(result.output, message));
  };
  refused(R"({"ops": ["softmax_topk"], "cols": [100]})", "softmax_topk cols=100: k: is required");
  refused(R"({"ops": ["softmax"], "cols": [100], "k": [5]})",
          "field \"k\" is read by none of this entry's ops");
  refused(R"({"ops": ["softmax_topk"], "cols": [100], "k": [5000]})", "k: must be in 1..4096 (got 5000)");
  refused(R"({"ops": ["softmax_topk"], "cols": [100], "k": [500]})", "k (500) is larger than cols (100)");
  refused(R"({"ops": ["softmax_topk"], "cols": [100], "k": [5], "index_dtypes": ["f32"]})",
          "index_dtype=f32: idx_dtype: f32 is not supported; expected i32 or i64");
  refused(R"({"ops": ["sofmax_topk"], "cols": [100], "k": [5]})",
          "\"ops\"[0]: op \"sofmax_topk\" is not one of attention, softmax, log_softmax, reduce_scale, softmax_topk");
}

TEST_CASE("inspect --log and --explain describe entries and calls") {
  TempDir dir;
  const std::string cache = dir / "cache";
  REQUIRE(precompile(cache, write_file(dir, "spec.json", kSmallSpec)).code == 0);
  const std::vector<std::string> keys = listed_keys(cache);
  REQUIRE(keys.size() == 2 * kKernelsPerArch);

  const Result log = run_kjit("inspect --log " + keys.front().substr(0, 10) + " --cache-dir " + cache);
  CHECK(log.code == 0);
  CHECK(contains(log.output, keys.front()));
  CHECK(contains(log.output, "\"nvrtc\""));
  CHECK(contains(log.output, "\"lowered_name\""));
  CHECK(run_kjit("inspect --log ffffffffffffffffffff --cache-dir " + cache).code != 0);

  // 40 rows share the bucket of the spec's 64 rows, so the precompiled kernel serves them.
  const std::string call = "--explain --op log_softmax --dtype bf16 --cols 4096 --rows 40";
  const Result hit = run_kjit("inspect " + call + " --arch sm_90 --cache-dir " + cache);
  INFO(hit.output);
  CHECK(hit.code == 0);
  CHECK(contains(hit.output, "(planned as log_softmax dtype=bf16 out_dtype=bf16 rows=64 cols=4096)"));
  CHECK(contains(hit.output, "cache:    cached in"));

  const Result miss = run_kjit("inspect " + call + " --arch sm_86 --cache-dir " + cache);
  INFO(miss.output);
  CHECK(miss.code == 0);
  CHECK(contains(miss.output, "not cached: no entry for this key"));
  CHECK(contains(miss.output, "arch sm_90 (this call: sm_86)"));
  CHECK(contains(miss.output, "arch sm_80 (this call: sm_86)"));
}

TEST_CASE("cache verify removes a corrupt entry and precompile rebuilds just that one") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kSmallSpec);
  REQUIRE(precompile(cache, spec).code == 0);

  const Result healthy = run_kjit("cache verify --cache-dir " + cache);
  CHECK(healthy.code == 0);
  CHECK(contains(healthy.output, "16 checked, 16 ok, 0 removed (all ok)"));

  const fs::path victim = entry_files(cache).front();
  flip_middle_byte(victim);
  const Result repaired = run_kjit("cache verify --cache-dir " + cache);
  INFO(repaired.output);
  CHECK(repaired.code == 1);  // as fsck: bad entries were found and removed
  CHECK(contains(repaired.output, "16 checked, 15 ok, 1 removed"));
  CHECK(contains(repaired.output, victim.filename().string()));
  CHECK_FALSE(fs::exists(victim));

  const Result rebuilt = precompile(cache, spec);
  INFO(rebuilt.output);
  REQUIRE(rebuilt.code == 0);
  CHECK(summary_count(rebuilt.output, "compiled") == 1);
  CHECK(summary_count(rebuilt.output, "already cached") == 2 * kKernelsPerArch - 1);
  CHECK(fs::exists(victim));
}

TEST_CASE("cache export then import into an empty folder keeps every key") {
  TempDir dir;
  const std::string cache = dir / "cache", copy = dir / "copy", bundle = dir / "kernels.kjb";
  REQUIRE(precompile(cache, write_file(dir, "spec.json", kSmallSpec)).code == 0);

  const Result exported = run_kjit("cache export " + bundle + " --cache-dir " + cache);
  CHECK(exported.code == 0);
  CHECK(contains(exported.output, "exported 16 entries"));
  // --cache-dir also works before the verb.
  const Result imported = run_kjit("cache --cache-dir " + copy + " import " + bundle);
  CHECK(imported.code == 0);
  CHECK(contains(imported.output, "imported 16 entries"));
  CHECK(listed_keys(copy) == listed_keys(cache));

  CHECK(run_kjit("cache import " + dir / "missing.kjb" + " --cache-dir " + copy).code != 0);
}

TEST_CASE("cache prune to one byte and cache clear empty the folder") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kSmallSpec);
  REQUIRE(precompile(cache, spec).code == 0);

  const Result pruned = run_kjit("cache prune --max-size 1 --cache-dir " + cache);
  CHECK(pruned.code == 0);
  CHECK(contains(pruned.output, "removed 16 entries"));
  CHECK(contains(run_kjit("inspect --cache-dir " + cache).output, "no entries"));
  CHECK(entry_files(cache).empty());

  REQUIRE(precompile(cache, spec).code == 0);
  const Result cleared = run_kjit("cache clear --cache-dir " + cache);
  CHECK(cleared.code == 0);
  CHECK(contains(cleared.output, "removed 16 entries"));
  CHECK(listed_keys(cache).empty());
}

TEST_CASE("bad arguments exit non-zero with a message naming the problem") {
  TempDir dir;
  const std::string cache = " --cache-dir " + dir / "cache";
  const std::string spec = write_file(dir, "spec.json", kSmallSpec);

  const Result zero_cols = run_kjit("inspect --explain --op softmax --cols 0 --arch sm_90" + cache);
  CHECK(zero_cols.code == 2);
  CHECK(contains(zero_cols.output, "cols must be >= 1"));

  const std::string bad_op =
      write_file(dir, "bad_op.json",
                 R"([{"ops": ["softmax"], "cols": [8]}, {"ops": ["sofmax"], "cols": [8]}])");
  const Result op = precompile(dir / "cache", bad_op);
  CHECK(op.code == 2);
  CHECK(contains(op.output, "entry 1, \"ops\"[0]: op \"sofmax\""));

  const std::string typo_spec = write_file(dir, "typo.json", R"({"ops": ["softmax"], "col": [8]})");
  const Result typo = precompile(dir / "cache", typo_spec);
  CHECK(typo.code == 2);
  CHECK(contains(typo.output, "unknown field \"col\""));

  const Result arch = run_kjit("precompile --arch sm_x --spec " + spec + cache);
  CHECK(arch.code == 2);
  CHECK(contains(arch.output, "--arch: 'sm_x'"));

  const Result size = run_kjit("cache prune --max-size lots" + cache);
  CHECK(size.code == 2);
  CHECK(contains(size.output, "--max-size: 'lots'"));
}

TEST_CASE("precompile --tune needs a GPU, and there stores a tuning record per shape") {
  TempDir dir;
  const std::string cache = " --cache-dir " + dir / "cache";
  const std::string spec = write_file(dir, "spec.json", kSmallSpec);
  // Without a GPU, tuning is refused before anything is compiled; with one it tunes and stores
  // a record per shape next to the cubins.
  const Result tune = run_kjit("precompile --tune --spec " + spec + cache);
  const std::string folder = dir / "cache";
  if (contains(run_kjit("info").output, "gpu 0")) {
    CHECK(tune.code == 0);
    CHECK(contains(tune.output, "shapes tuned"));
    const std::vector<fs::path> entries = entry_files(folder);
    CHECK(std::any_of(entries.begin(), entries.end(), [](const fs::path& entry) {
      return entry.parent_path().parent_path().filename() == "tune";  // <kind>/<shard>/<digest>.bin
    }));
  } else {
    CHECK(tune.code != 0);
    CHECK(contains(tune.output, "--tune: tuning"));
    CHECK((!fs::exists(folder) || entry_files(folder).empty()));
  }
}

TEST_CASE("four processes of four threads precompiling one spec compile each kernel once") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kSmallSpec);
  // Started together through one shell; each writes its own log.
  std::string line = "sh -c '";
  for (int i = 0; i < 4; ++i)
    line += std::string(KJIT_CLI_PATH) + " precompile -j 4 --arch sm_90 --spec " + spec +
            " --cache-dir " + cache + " > " + dir / ("log" + std::to_string(i)) + " 2>&1 & ";
  line += "wait'";
  REQUIRE(std::system(line.c_str()) == 0);
  int compiled = 0;
  for (int i = 0; i < 4; ++i) {
    std::ifstream file(dir / ("log" + std::to_string(i)));
    const std::string log((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    INFO(log);
    CHECK(summary_count(log, "failed") == 0);
    compiled += summary_count(log, "compiled");
  }
  CHECK(compiled == kKernelsPerArch);  // the per-key lock made every other process wait and reuse
  const Result verify = run_kjit("cache verify --cache-dir " + cache);
  CHECK(verify.code == 0);
  CHECK(contains(verify.output, std::to_string(kKernelsPerArch) + " ok, 0 removed"));
}
