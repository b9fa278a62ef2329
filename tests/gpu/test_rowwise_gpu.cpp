// SPDX-License-Identifier: Apache-2.0
// Every op, dtype pair and algorithm against the float64 reference over the dispatch
// boundaries: each algorithm is forced wherever why_not_rowwise (for this device) accepts it,
// and must be refused with kErrorInvalidConfig where it does not; the automatic path runs too.
// Cases run on several threads at once so that their NVRTC compiles overlap.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_problem.h"
#include "runtime/parallel_for.h"

using namespace kjit;
using namespace kjit::test;

namespace {

constexpr std::int64_t kMaxElements = std::int64_t{64} << 20;
// 12288 f32 and 24576 f16 columns are exactly 48 KB: the edge of the default shared-memory limit.
const std::int64_t kF32Cols[] = {1,     2,     3,     31,    32,     33,     127,    1000,   1024,  1025, 4096,
                                 4097,  12288, 12345, 32000, 50257,  65536,  131072, 151936, 262144};
const std::int64_t kHalfCols[] = {1, 3, 32, 33, 1025, 4097, 24576, 50257, 151936};
const std::int64_t kMixedCols[] = {31, 1000, 4096, 32000, 262144};
const RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};
const Algorithm kAlgorithms[] = {Algorithm::kAuto,        Algorithm::kWarp,    Algorithm::kBlockRegs,
                                 Algorithm::kBlockSmem,   Algorithm::kBlockOnline,
                                 Algorithm::kCluster,     Algorithm::kClusterSmem,
                                 Algorithm::kStream,      Algorithm::kRing,    Algorithm::kBlockSplit};

struct Unit {
  DType in, out;
  std::int64_t rows, cols;
};

void add_units(std::vector<Unit>& units, DType in, DType out, const std::int64_t* cols_begin,
               const std::int64_t* cols_end, std::vector<std::int64_t> rows) {
  for (const std::int64_t* c = cols_begin; c != cols_end; ++c)
    for (std::int64_t r : rows) {
      if (r == 4096 && *c > 4097) continue;  // many rows only where rows are narrow
      if (r * *c > kMaxElements) continue;
      units.push_back({in, out, r, *c});
    }
}

std::vector<Unit> all_units() {
  std::vector<Unit> units;
  add_units(units, DType::kF32, DType::kF32, std::begin(kF32Cols), std::end(kF32Cols), {1, 7, 64, 4096});
  for (DType half : {DType::kF16, DType::kBF16})
    add_units(units, half, half, std::begin(kHalfCols), std::end(kHalfCols), {7, 64, 4096});
  add_units(units, DType::kF32, DType::kBF16, std::begin(kMixedCols), std::end(kMixedCols), {7, 64});
  add_units(units, DType::kBF16, DType::kF32, std::begin(kMixedCols), std::end(kMixedCols), {7, 64});
  // The widest units first: they take longest, and the pool then balances the rest.
  std::stable_sort(units.begin(), units.end(),
                   [](const Unit& a, const Unit& b) { return a.rows * a.cols > b.rows * b.cols; });
  return units;
}

struct Tally {
  std::mutex mutex;
  std::vector<std::string> failures;
  std::map<std::string, int> runs;  // algorithm name -> checked calls
  int refused = 0;

  void fail(std::string what) {
    std::lock_guard<std::mutex> lock(mutex);
    failures.push_back(std::move(what));
  }
  void ran(Algorithm algorithm) {
    std::lock_guard<std::mutex> lock(mutex);
    ++runs[to_string(algorithm)];
  }
  void was_refused() {
    std::lock_guard<std::mutex> lock(mutex);
    ++refused;
  }
};

// Why `algorithm` cannot run this problem here, as the runtime will decide it; empty if it can.
std::string why_not(const RowwiseProblem& problem, const DeviceProps& device, Algorithm algorithm) {
  const KernelConfig config = complete_rowwise_config(problem, device, KernelConfig{algorithm});
  return why_not_rowwise(problem, device, config);
}

// One call of one algorithm on a ready batch; returns what went wrong, empty if nothing did.
std::string run_one(Runtime& rt, RowBatch& batch, RowOp op, Algorithm algorithm, const DeviceProps& device,
                    CUstream stream, const std::vector<std::int64_t>& rows, bool* refused) {
  const RowwiseArgs args = batch.args();
  float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  const RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, max_pack_for(args)};
  *refused = false;
  if (algorithm != Algorithm::kAuto) {
    if (std::string why = why_not(problem, device, algorithm); !why.empty()) {
      *refused = true;
      try {
        rt.run_with_config(op, args, scale, KernelConfig{algorithm}, stream);
        synchronize(stream);
        return "ran although why_not_rowwise says: " + why;
      } catch (const Error& error) {
        if (error.status() != Status::kErrorInvalidConfig)
          return std::string("refused with status ") + to_string(error.status()) + ": " + error.what();
        return {};
      }
    }
  }
  batch.reset(stream);
  try {
    if (algorithm == Algorithm::kAuto) run_auto(rt, op, args, scale, stream);
    else rt.run_with_config(op, args, scale, KernelConfig{algorithm}, stream);
    synchronize(stream);
  } catch (const Error& error) {
    return std::string("threw ") + to_string(error.status()) + ": " + error.what();
  }
  return batch.check(op, rows);
}

void run_unit(Runtime& rt, const Unit& unit, const DeviceProps& device, std::uint64_t seed, Tally& tally) {
  current_or_primary_context();
  Stream stream = create_stream();
  const BatchLayout layout{unit.in, unit.out, unit.rows, unit.cols};
  RowBatch batch(layout, seed);
  const std::vector<std::int64_t> rows = rows_to_check(unit.rows, seed);
  for (RowOp op : kOps)
    for (Algorithm algorithm : kAlgorithms) {
      bool refused = false;
      const std::string why = run_one(rt, batch, op, algorithm, device, stream.get(), rows, &refused);
      if (!why.empty())
        tally.fail(std::string(to_string(op)) + " " + describe(layout) + " " + to_string(algorithm) +
                   ": " + why);
      else if (refused) tally.was_refused();
      else tally.ran(algorithm);
    }
}

}  // namespace

TEST_CASE("row-wise ops match the reference for every algorithm, dtype and width") {
  KJIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const DeviceProps device = current_device();
  Runtime rt;
  const std::vector<Unit> units = all_units();
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  parallel_for(units.size(), std::min(16, hardware_threads()), [&](std::size_t i) {
    try {
      run_unit(rt, units[i], device, seed, tally);
    } catch (const std::exception& error) {
      tally.fail(describe(BatchLayout{units[i].in, units[i].out, units[i].rows, units[i].cols}) +
                 ": setup failed: " + error.what());
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(units.size() << " shapes on " << device.name << " (sm_" << device.arch << ") in " << seconds
                       << " s; " << tally.refused << " forced configs refused as invalid");
  for (const auto& [algorithm, count] : tally.runs) MESSAGE(algorithm << ": " << count << " calls checked");

  for (std::size_t i = 0; i < tally.failures.size() && i < 25; ++i) FAIL_CHECK(tally.failures[i]);
  CHECK_MESSAGE(tally.failures.empty(), tally.failures.size() << " calls failed (seed " << seed << ")");
  for (Algorithm algorithm : kAlgorithms) {
    const bool clustered = algorithm == Algorithm::kCluster || algorithm == Algorithm::kClusterSmem ||
                           algorithm == Algorithm::kStream || algorithm == Algorithm::kRing;
    if (clustered && device.arch < 90) continue;
    CHECK_MESSAGE(tally.runs[to_string(algorithm)] > 0, std::string(to_string(algorithm)) << " never ran");
  }
}

// Stream layouts beyond the one complete_rowwise_config fits: several rows per tile at each
// group size, one row per block, and every cluster size, at widths with and without a tail
// past the last 16-byte boundary.
std::vector<KernelConfig> stream_layouts(int pack) {
  std::vector<KernelConfig> layouts;
  for (int threads : {128, 256})
    for (int group : {8, 16, 32}) layouts.push_back({Algorithm::kStream, pack, threads, group, 1});
  for (int threads : {128, 512})
    for (int cluster : {1, 2, 4, 8, 16}) layouts.push_back({Algorithm::kStream, pack, threads, threads, cluster});
  return layouts;
}

// block_online beyond the one-block-per-row layout complete_rowwise_config fits: every cluster
// size, small and large blocks.
std::vector<KernelConfig> online_layouts(int pack) {
  std::vector<KernelConfig> layouts;
  for (int threads : {128, 1024})
    for (int cluster : {1, 2, 4, 8, 16}) layouts.push_back({Algorithm::kBlockOnline, pack, threads, threads, cluster});
  return layouts;
}

// The ring kernel at every cluster size with 512 consumer threads (one, two and four chunks a
// slice), with 256 at one block and sixteen a row, and as two groups of 256 taking turns over
// the rows (at one, two, four, fourteen and sixteen blocks a row; with one row, the second group
// has none; at two, 16-bit rows of 50256 columns hold 112 values a thread, as words).
std::vector<KernelConfig> ring_layouts(DType dtype) {
  const int pack = 16 / size_of(dtype);
  std::vector<KernelConfig> layouts;
  for (int cluster : {1, 2, 4, 8, 16}) layouts.push_back({Algorithm::kRing, pack, 512, 512, cluster});
  for (int cluster : {1, 16}) layouts.push_back({Algorithm::kRing, pack, 256, 256, cluster});
  for (int cluster : {1, 2, 4, 14, 16}) layouts.push_back({Algorithm::kRing, pack, 512, 256, cluster});
  return layouts;
}

// The row held over a cluster (registers, shared memory) at every cluster size, on both grids:
// resident clusters walking several rows each where rows outnumber them, and a cluster a row;
// and a block per row at 256 threads, up to 64 values a thread in registers, a tuning candidate
// the forced configs above miss.
std::vector<KernelConfig> cluster_and_block_layouts(int pack) {
  std::vector<KernelConfig> layouts;
  for (int threads : {128, 512})
    for (int cluster : {2, 4, 8, 16})
      for (ClusterGrid grid : {ClusterGrid::kResident, ClusterGrid::kPerRow}) {
        layouts.push_back({Algorithm::kCluster, pack, threads, threads, cluster, grid});
        layouts.push_back({Algorithm::kClusterSmem, pack, threads, threads, cluster, grid});
      }
  layouts.push_back({Algorithm::kBlockRegs, pack, 256, 256, 1});
  layouts.push_back({Algorithm::kBlockSmem, pack, 256, 256, 1});
  return layouts;
}

// block_split with one pack staged, half of them and all, at small and large blocks (the forced
// configs above stage as many as keep the most threads resident), and at half the widest pack.
std::vector<KernelConfig> split_layouts(const RowwiseProblem& problem) {
  std::vector<KernelConfig> layouts;
  for (int pack : {problem.max_pack, problem.max_pack / 2}) {
    if (pack < 1) continue;
    for (int threads : {128, 1024}) {
      const auto packs = static_cast<int>(split_thread_packs(problem.cols, pack, threads));
      for (int staged : {1, (packs + 1) / 2, packs}) {
        const KernelConfig config{Algorithm::kBlockSplit, pack, threads, threads, 1, ClusterGrid::kResident, staged};
        if (std::find(layouts.begin(), layouts.end(), config) == layouts.end()) layouts.push_back(config);
      }
    }
  }
  return layouts;
}

// Needs sm_90: a ctest entry of its own (gpu_rowwise_sm90).
TEST_CASE("every stream, block_online, ring, cluster and block layout matches the reference" *
          doctest::test_suite("sm90") * doctest::skip()) {
  KJIT_REQUIRE_GPU();
  const DeviceProps device = current_device();
  if (device.arch < 90)
    KJIT_SKIP_GPU_CASE("the stream kernel (bulk async copies) and clusters need sm_90; this GPU is sm_" +
                       std::to_string(device.arch));
  const std::uint64_t seed = test_seed();
  Runtime rt;
  std::vector<Unit> units;
  for (std::int64_t cols : {1, 3, 33, 1025, 4097, 50257, 151936})
    for (std::int64_t rows : {1, 5, 300}) units.push_back({DType::kF32, DType::kF32, rows, cols});
  for (std::int64_t cols : {33, 1000, 1025, 50256})
    for (std::int64_t rows : {1, 5, 300}) units.push_back({DType::kBF16, DType::kBF16, rows, cols});
  // fp16 rows held as loaded words (HeldRow) convert differently from bf16 ones.
  for (std::int64_t cols : {1000, 50256}) units.push_back({DType::kF16, DType::kF16, 5, cols});
  std::vector<std::unique_ptr<RowBatch>> batches;
  struct Job {
    std::size_t unit;
    RowOp op;
    KernelConfig config;
  };
  std::vector<Job> jobs;
  // KJIT_TEST_FILTER=TEXT keeps the calls whose description contains TEXT (to rerun one under
  // compute-sanitizer).
  const char* filter = std::getenv("KJIT_TEST_FILTER");
  for (std::size_t u = 0; u < units.size(); ++u) {
    batches.push_back(std::make_unique<RowBatch>(
        BatchLayout{units[u].in, units[u].out, units[u].rows, units[u].cols}, seed));
    const RowwiseArgs args = batches.back()->args();
    for (RowOp op : kOps) {
      const RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, max_pack_for(args)};
      std::vector<KernelConfig> layouts = stream_layouts(problem.max_pack);
      for (const KernelConfig& config : online_layouts(problem.max_pack)) layouts.push_back(config);
      for (const KernelConfig& config : cluster_and_block_layouts(problem.max_pack)) layouts.push_back(config);
      for (const KernelConfig& config : ring_layouts(args.in_dtype)) layouts.push_back(config);
      for (const KernelConfig& config : split_layouts(problem)) layouts.push_back(config);
      for (const KernelConfig& config : layouts)
        if (why_not_rowwise(problem, device, config).empty() &&
            (!filter || (std::string(to_string(op)) + " " + describe(batches.back()->layout()) + " " +
                         config.to_string()).find(filter) != std::string::npos))
          jobs.push_back({u, op, config});
    }
  }
  // Compiles in parallel; runs one at a time with a synchronize after each, so a kernel fault
  // (which ends the context) is pinned on the config that caused it.
  parallel_for(jobs.size(), std::min(16, hardware_threads()), [&](std::size_t i) {
    current_or_primary_context();
    rt.prepare(jobs[i].op, batches[jobs[i].unit]->args(), jobs[i].config);
  });
  std::vector<std::string> failures;
  int checked = 0;
  for (const Job& job : jobs) {
    RowBatch& batch = *batches[job.unit];
    const std::string where = std::string(to_string(job.op)) + " " + describe(batch.layout()) + " " +
                              job.config.to_string() + ": ";
    float* scale = job.op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
    try {
      batch.reset(nullptr);
      rt.run_with_config(job.op, batch.args(), scale, job.config, nullptr);
      synchronize(nullptr);
    } catch (const Error& error) {
      failures.push_back(where + "threw " + error.what());
      break;  // a fault ends the context: nothing after it can run
    }
    if (std::string why = batch.check(job.op, rows_to_check(batch.args().rows, seed)); !why.empty())
      failures.push_back(where + why);
    else ++checked;
  }
  MESSAGE(checked << " of " << jobs.size() << " layout calls checked (seed " << seed << ")");
  for (std::size_t i = 0; i < failures.size() && i < 25; ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  if (!filter) CHECK(checked > 100);
}

TEST_CASE("a forced config the device cannot run is refused, not launched") {
  KJIT_REQUIRE_GPU();
  const DeviceProps device = current_device();
  Runtime rt;
  RowBatch batch(BatchLayout{DType::kF32, DType::kF32, 4, 262144}, test_seed());
  auto status_of = [&](KernelConfig config) {
    try {
      rt.run_with_config(RowOp::kSoftmax, batch.args(), nullptr, config);
      synchronize(nullptr);
    } catch (const Error& error) {
      return error.status();
    }
    return Status::kSuccess;
  };
  CHECK(status_of(KernelConfig{Algorithm::kWarp}) == Status::kErrorInvalidConfig);
  CHECK(status_of({Algorithm::kWarp, 4, 128, 64, 1}) == Status::kErrorInvalidConfig);
  CHECK(status_of({Algorithm::kBlockOnline, 4, 100, 100, 1}) == Status::kErrorInvalidConfig);
  CHECK(status_of({Algorithm::kBlockOnline, 16, 256, 256, 1}) == Status::kErrorInvalidConfig);
  if (device.arch < 90) CHECK(status_of(KernelConfig{Algorithm::kCluster}) == Status::kErrorInvalidConfig);
}

TEST_CASE("explain reports the kernel the automatic path uses") {
  KJIT_REQUIRE_GPU();
  const DeviceProps device = current_device();
  Runtime rt;
  RowBatch batch(BatchLayout{DType::kBF16, DType::kBF16, 64, 4097}, test_seed());
  const RowwiseArgs args = batch.args();
  const KernelReport report = rt.explain(RowOp::kLogSoftmax, args);
  CAPTURE(report.name_expression);
  CAPTURE(report.config.to_string());
  const RowwiseProblem problem{RowOp::kLogSoftmax, args.in_dtype, args.out_dtype,
                               bucket_rows(rows_bucket(args.rows)), args.cols, max_pack_for(args),
                               dense_rows(args)};
  CHECK(report.config == choose_rowwise_config(problem, device));
  CHECK(report.arch == "sm_" + std::to_string(device.arch));
  CHECK(report.cubin_bytes > 0);
  CHECK(report.registers > 0);
  CHECK(report.name_expression.find("4097") != std::string::npos);
  CHECK(report.kernel_key.size() >= 16);
  // explain compiles and loads but launches nothing: the output stays poisoned.
  batch.reset(nullptr);
  synchronize(nullptr);
  CHECK(batch.check(RowOp::kLogSoftmax, {0}).find("never written") != std::string::npos);
}
