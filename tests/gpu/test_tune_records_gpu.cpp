// SPDX-License-Identifier: Apache-2.0
// Tuning records on the GPU: a stored winner is what later runtimes (KJIT_TUNE=cached) run,
// KJIT_TUNE=off ignores it, and KJIT_TUNE=first-use tunes a new class on its first call (not
// inside a graph capture); the same for softmax_topk tunings, whose candidates are checked and
// timed like row-wise ones.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "autotune/scratch_rows.h"
#include "cache/cache_layout.h"
#include "kjit/runtime.hpp"
#include "quick_tuning.h"
#include "support/device_buffer.h"

using namespace kjit;

namespace {

/// Points the runtime's environment at a fresh cache folder for one test, then removes it.
class ScopedCacheEnv {
 public:
  explicit ScopedCacheEnv(const char* tune_mode) {
    char pattern[] = "/tmp/kjit-tune-gpu-XXXXXX";
    dir_ = mkdtemp(pattern);
    setenv("KJIT_CACHE_DIR", dir_.c_str(), 1);
    setenv("KJIT_DISK_CACHE", "1", 1);
    set_mode(tune_mode);
  }
  ~ScopedCacheEnv() {
    unsetenv("KJIT_TUNE");
    setenv("KJIT_DISK_CACHE", "0", 1);
    std::filesystem::remove_all(dir_);
  }
  void set_mode(const char* tune_mode) { setenv("KJIT_TUNE", tune_mode, 1); }
  /// Tuning records on disk ("tune" entries of the cache layout).
  int tune_entries() const {
    int count = 0;
    std::error_code error;
    const auto folder = std::filesystem::path(kjit::cache::CacheLayout(dir_).root()) / "tune";
    if (!std::filesystem::exists(folder, error)) return 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, error))
      if (entry.path().extension() == ".bin") ++count;
    return count;
  }

 private:
  std::string dir_;
};

}  // namespace

TEST_CASE("a stored tuning record is what later runtimes run, unless tuning is off") {
  KJIT_REQUIRE_GPU();
  ScopedCacheEnv env("cached");
  Stream stream = create_stream();
  KernelConfig winner;
  KernelConfig heuristic;
  {
    Runtime tuner_runtime;
    TuneOptions<KernelConfig> options = test::quick_tune_options();
    // Make the heuristic's pick lose, so the record must change what runs.
    const TuneReport<KernelConfig> probe = tuner_runtime.tune(
        RowOp::kSoftmax, DType::kF32, DType::kF32, 256, 3000, options, stream.get());
    options.sabotage = probe.heuristic;
    const TuneReport<KernelConfig> report = tuner_runtime.tune(
        RowOp::kSoftmax, DType::kF32, DType::kF32, 256, 3000, options, stream.get());
    winner = report.winner;
    heuristic = report.heuristic;
    REQUIRE(winner != heuristic);
    tuner_runtime.record_tuning(report);
    ScratchRows rows(DType::kF32, DType::kF32, 256, 3000, 1, stream.get());
    CHECK(tuner_runtime.explain(RowOp::kSoftmax, rows.args(0)).config == winner);
  }
  ScratchRows rows(DType::kF32, DType::kF32, 256, 3000, 1, stream.get());
  {
    Runtime later;  // reads the record from disk, as a new process would
    CHECK(later.explain(RowOp::kSoftmax, rows.args(0)).config == winner);
  }
  env.set_mode("off");
  Runtime untuned;
  CHECK(untuned.explain(RowOp::kSoftmax, rows.args(0)).config == heuristic);
}

TEST_CASE("KJIT_TUNE=first-use tunes a new class on its first call and keeps the record") {
  KJIT_REQUIRE_GPU();
  ScopedCacheEnv env("first-use");
  Stream stream = create_stream();
  ScratchRows rows(DType::kBF16, DType::kBF16, 128, 5000, 1, stream.get());
  KernelConfig chosen;
  CHECK(env.tune_entries() == 0);
  {
    Runtime runtime;
    rows.poison_output(0, stream.get());
    runtime.softmax(rows.args(0), stream.get());
    KJIT_CU(cuStreamSynchronize, stream.get());
    const std::vector<float> out = rows.output_as_floats(0);
    double sum = 0.0;
    for (int c = 0; c < 5000; ++c) sum += out[c];
    CHECK(sum == doctest::Approx(1.0).epsilon(0.02));
    chosen = runtime.explain(RowOp::kSoftmax, rows.args(0)).config;
    CHECK(env.tune_entries() == 1);  // tuned once, on the first call
    runtime.softmax(rows.args(0), stream.get());
    KJIT_CU(cuStreamSynchronize, stream.get());
    CHECK(env.tune_entries() == 1);  // and not again
  }
  env.set_mode("cached");
  Runtime later;
  CHECK(later.explain(RowOp::kSoftmax, rows.args(0)).config == chosen);
}

TEST_CASE("KJIT_TUNE=first-use does not tune inside a graph capture") {
  KJIT_REQUIRE_GPU();
  ScopedCacheEnv env("first-use");
  Stream stream = create_stream();
  ScratchRows rows(DType::kF32, DType::kF32, 32, 6000, 1, stream.get());
  Runtime runtime;
  rows.poison_output(0, stream.get());
  KJIT_CU(cuStreamSynchronize, stream.get());
  KJIT_CU(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_RELAXED);
  runtime.softmax(rows.args(0), stream.get());  // a new class, which a plain call would tune
  CUgraph graph = nullptr;
  REQUIRE(cuda().cuStreamEndCapture(stream.get(), &graph) == CUDA_SUCCESS);
  REQUIRE(graph != nullptr);
  CHECK(env.tune_entries() == 0);
  CUgraphExec exec = nullptr;
  KJIT_CU(cuGraphInstantiateWithFlags, &exec, graph, 0);
  KJIT_CU(cuGraphLaunch, exec, stream.get());
  KJIT_CU(cuStreamSynchronize, stream.get());
  const std::vector<float> out = rows.output_as_floats(0);
  double sum = 0.0;
  for (int c = 0; c < 6000; ++c) sum += out[c];
  CHECK(sum == doctest::Approx(1.0).epsilon(0.02));
  cuda().cuGraphExecDestroy(exec);
  cuda().cuGraphDestroy(graph);
}

namespace {

/// Logits and outputs for explain_topk calls (nothing is launched on them).
struct TopkCallBuffers {
  DeviceMemory logits, probs, indices;
  TopkArgs args;

  TopkCallBuffers(std::int64_t rows, std::int64_t cols, int k)
      : logits(allocate_device(static_cast<std::size_t>(rows * cols) * 4)),
        probs(allocate_device(static_cast<std::size_t>(rows * k) * 4)),
        indices(allocate_device(static_cast<std::size_t>(rows * k) * 8)) {
    args.logits = reinterpret_cast<const void*>(logits.get());
    args.row_stride = args.cols = cols;
    args.rows = rows;
    args.k = k;
    args.probs_out = reinterpret_cast<float*>(probs.get());
    args.idx_out = reinterpret_cast<void*>(indices.get());
  }
};

}  // namespace

TEST_CASE("softmax_topk tuning: a verified winner, a wrong candidate never wins, the record is run") {
  KJIT_REQUIRE_GPU();
  ScopedCacheEnv env("cached");
  Stream stream = create_stream();
  TuneOptions<TopkConfig> options = test::quick_tune_options<TopkConfig>();
  constexpr std::int64_t kRows = 8, kCols = 32000;
  constexpr int kK = 50;
  Runtime tuner_runtime;
  const TuneReport<TopkConfig> first =
      tuner_runtime.tune_topk(DType::kF32, DType::kI64, kRows, kCols, kK, options, stream.get());
  REQUIRE(first.candidates.size() >= 2);
  CHECK(first.candidates.front().config == first.heuristic);
  const TuneCandidate<TopkConfig>* winner = first.find(first.winner);
  const TuneCandidate<TopkConfig>* heuristic = first.find(first.heuristic);
  REQUIRE(winner != nullptr);
  REQUIRE(heuristic != nullptr);
  CHECK(winner->status == "ok");
  CHECK(heuristic->status == "ok");
  CHECK(winner->timing.median_us <= heuristic->timing.median_us * 1.05);
  MESSAGE("top-K winner " << first.winner.to_string() << " " << winner->timing.median_us
                          << " us; heuristic " << heuristic->timing.median_us << " us; "
                          << first.candidates.size() << " candidates in " << first.seconds << " s");

  // The heuristic's pick now writes a wrong index: it is rejected, and something else wins.
  options.sabotage = first.heuristic;
  const TuneReport<TopkConfig> second =
      tuner_runtime.tune_topk(DType::kF32, DType::kI64, kRows, kCols, kK, options, stream.get());
  const TuneCandidate<TopkConfig>* sabotaged = second.find(first.heuristic);
  REQUIRE(sabotaged != nullptr);
  CHECK(sabotaged->status.rfind("wrong", 0) == 0);
  REQUIRE(second.winner != first.heuristic);
  tuner_runtime.record_tuning(second);

  TopkCallBuffers call(kRows, kCols, kK);
  const std::string tuned_kernel = tuner_runtime.explain_topk(call.args, &second.winner).name_expression;
  const std::string heuristic_kernel =
      tuner_runtime.explain_topk(call.args, &first.heuristic).name_expression;
  CHECK(tuner_runtime.explain_topk(call.args).name_expression == tuned_kernel);
  {
    Runtime later;  // reads the record from disk, as a new process would
    CHECK(later.explain_topk(call.args).name_expression == tuned_kernel);
  }
  env.set_mode("off");
  Runtime untuned;
  CHECK(untuned.explain_topk(call.args).name_expression == heuristic_kernel);
}

TEST_CASE("KJIT_TUNE=first-use tunes a new softmax_topk class once, and its answer stands") {
  KJIT_REQUIRE_GPU();
  ScopedCacheEnv env("first-use");
  Stream stream = create_stream();
  constexpr std::int64_t kRows = 4, kCols = 20000;
  constexpr int kK = 40;
  ScratchRows logits(DType::kF32, DType::kF32, kRows, kCols, 1, stream.get());
  TopkCallBuffers call(kRows, kCols, kK);
  call.args.logits = logits.args(0).in;
  auto indices_of = [&](Runtime& runtime) {
    KJIT_CU(cuMemsetD8Async, call.indices.get(), 0xFF, kRows * kK * 8, stream.get());
    runtime.softmax_topk(call.args, stream.get());
    KJIT_CU(cuStreamSynchronize, stream.get());
    std::vector<long long> indices(kRows * kK);
    KJIT_CU(cuMemcpyDtoH, indices.data(), call.indices.get(), indices.size() * 8);
    return indices;
  };
  std::vector<long long> tuned;
  {
    Runtime runtime;
    tuned = indices_of(runtime);
    CHECK(env.tune_entries() == 1);  // tuned on the first call
    indices_of(runtime);
    CHECK(env.tune_entries() == 1);  // and not again
  }
  env.set_mode("off");
  Runtime untuned;
  CHECK(indices_of(untuned) == tuned);  // the tuned kernel and the heuristic's agree
}
