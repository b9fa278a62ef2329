// SPDX-License-Identifier: Apache-2.0
// softmax_topk against the float64 reference: widths from 1 to 262144 columns, k from 1 to
// kMaxTopK, every flag set, both index dtypes, per-row k, strided rows, and rows built to break
// a top-k kernel (ties at the k-th place, huge logits at extreme temperatures, runs of -inf, NaN
// and +inf). Indices must match the reference exactly. Batches run on several threads at once
// so that their NVRTC compiles overlap.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_inputs.h"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"
#include "runtime/parallel_for.h"
#include "topk_batch.h"

using namespace kjit;
using namespace kjit::test;

namespace {

// rows * cols of one batch, which bounds the host time spent generating and checking it.
constexpr std::int64_t kMaxElements = 40'000'000;
const std::int64_t kWidths[] = {1, 7, 1000, 32000, 50257, 128256, 151936, 262144};
const std::int64_t kHalfWidths[] = {1000, 50257, 128256};
const std::int64_t kRowCounts[] = {1, 3, 64, 300};
const std::int64_t kHalfRowCounts[] = {3, 64, 300};
const std::int32_t kKs[] = {1, 2, 50, 256, 1000, 1024, 4096};
const std::uint32_t kAllFlags[] = {0, kTopkLogProbs, kTopkRenorm, kTopkLogProbs | kTopkRenorm};
const float kSweepTemperatures[] = {1.0f, 0.5f, 1.0f, 2.0f, 0.7f};

/// One batch and the calls made on it, one after another; with `forced`, through that config
/// instead of the dispatcher's choice.
struct TopkUnit {
  TopkLayout layout;
  std::vector<TopkRowKind> kinds;
  std::vector<TopkCall> calls;
  std::optional<TopkConfig> forced;
};

// The k of kKs that fit `cols`, and cols itself where it is a valid k.
std::vector<std::int32_t> ks_for(std::int64_t cols) {
  std::vector<std::int32_t> ks;
  for (std::int32_t k : kKs)
    if (k <= cols) ks.push_back(k);
  if (cols <= kMaxTopK && std::find(ks.begin(), ks.end(), cols) == ks.end())
    ks.push_back(static_cast<std::int32_t>(cols));
  return ks;
}

// Call `n` of a sweep. Flags, index dtype, per-row k and temperature cycle with coprime periods
// (8, 3, 5), so that over a sweep every combination meets many widths and k.
TopkCall rotated_call(std::int32_t k, std::size_t n) {
  TopkCall call;
  call.k = k;
  call.flags = kAllFlags[n % 4];
  call.idx_dtype = (n / 4) % 2 == 0 ? DType::kI64 : DType::kI32;
  call.row_k = n % 3 == 0 ? RowKMode::kInRange : RowKMode::kNone;
  call.temperature = kSweepTemperatures[n % 5];
  return call;
}

// One unit per (cols, rows) within kMaxElements, each calling every k that fits.
void add_sweep(std::vector<TopkUnit>& units, DType dtype, const std::vector<std::int64_t>& widths,
               const std::vector<std::int64_t>& row_counts, const std::vector<TopkRowKind>& kinds,
               std::size_t* n) {
  for (std::int64_t cols : widths)
    for (std::int64_t rows : row_counts) {
      if (rows * cols > kMaxElements) continue;
      TopkUnit unit{{dtype, rows, cols}, kinds, {}};
      for (std::int32_t k : ks_for(cols)) unit.calls.push_back(rotated_call(k, (*n)++));
      units.push_back(std::move(unit));
    }
}

struct Tally {
  std::mutex mutex;
  std::vector<std::string> failures;
  int calls_checked = 0;

  void fail(std::string what) {
    std::lock_guard<std::mutex> lock(mutex);
    failures.push_back(std::move(what));
  }
  void passed() {
    std::lock_guard<std::mutex> lock(mutex);
    ++calls_checked;
  }
};

// One call on a prepared batch; what went wrong, empty if nothing did.
std::string run_call(Runtime& rt, TopkBatch& batch, const TopkCall& call, CUstream stream,
                     const std::vector<std::int64_t>& rows,
                     const std::optional<TopkConfig>& forced = std::nullopt) {
  batch.prepare(call, stream);
  try {
    if (forced) rt.softmax_topk_with_config(batch.args(call), *forced, stream);
    else rt.softmax_topk(batch.args(call), stream);
    synchronize(stream);
  } catch (const Error& error) {
    return std::string("threw ") + to_string(error.status()) + ": " + error.what();
  }
  return batch.check(call, rows);
}

void run_unit(Runtime& rt, const TopkUnit& unit, std::uint64_t seed, Tally& tally) {
  current_or_primary_context();
  Stream stream = create_stream();
  TopkBatch batch(unit.layout, TopkRowSource{seed, unit.kinds});
  const std::vector<std::int64_t> rows = rows_to_check(unit.layout.rows, seed);
  for (const TopkCall& call : unit.calls) {
    const std::string why = run_call(rt, batch, call, stream.get(), rows, unit.forced);
    const std::string config = unit.forced ? " " + unit.forced->to_string() : "";
    if (why.empty()) tally.passed();
    else tally.fail(describe(unit.layout) + config + " " + describe(call) + ": " + why);
  }
}

// Runs every unit (the largest first, on up to 16 threads) and reports the failures.
void run_units(std::vector<TopkUnit> units) {
  std::stable_sort(units.begin(), units.end(), [](const TopkUnit& a, const TopkUnit& b) {
    return a.layout.rows * a.layout.cols > b.layout.rows * b.layout.cols;
  });
  const std::uint64_t seed = test_seed();
  Runtime rt;
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  parallel_for(units.size(), std::min(16, hardware_threads()), [&](std::size_t i) {
    try {
      run_unit(rt, units[i], seed, tally);
    } catch (const std::exception& error) {
      tally.fail(describe(units[i].layout) + ": setup failed: " + error.what());
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(tally.calls_checked << " calls checked on " << units.size() << " batches in " << seconds << " s");
  for (std::size_t i = 0; i < tally.failures.size() && i < 25; ++i) FAIL_CHECK(tally.failures[i]);
  CHECK_MESSAGE(tally.failures.empty(), tally.failures.size() << " calls failed (seed " << seed << ")");
}

// Every flag set x both index dtypes x with and without per-row k, for each k.
std::vector<TopkCall> every_combination(const std::vector<std::int32_t>& ks, float temperature) {
  std::vector<TopkCall> calls;
  for (std::int32_t k : ks)
    for (std::uint32_t flags : kAllFlags)
      for (DType idx : {DType::kI64, DType::kI32})
        for (RowKMode row_k : {RowKMode::kNone, RowKMode::kInRange})
          calls.push_back({k, flags, idx, row_k, temperature});
  return calls;
}

}  // namespace

TEST_CASE("softmax_topk matches the reference over widths, k and dtypes") {
  KJIT_REQUIRE_GPU();
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  const std::vector<TopkRowKind>& kinds = all_topk_row_kinds();
  add_sweep(units, DType::kF32, {std::begin(kWidths), std::end(kWidths)},
            {std::begin(kRowCounts), std::end(kRowCounts)}, kinds, &n);
  for (DType half : {DType::kF16, DType::kBF16})
    add_sweep(units, half, {std::begin(kHalfWidths), std::end(kHalfWidths)},
              {std::begin(kHalfRowCounts), std::end(kHalfRowCounts)}, kinds, &n);
  run_units(std::move(units));
}

TEST_CASE("every flag set, both index dtypes, with and without per-row k") {
  KJIT_REQUIRE_GPU();
  const std::vector<TopkRowKind>& kinds = all_topk_row_kinds();
  run_units({
      {{DType::kF32, 64, 1000}, kinds, every_combination({50, 1000}, 1.0f)},
      {{DType::kBF16, 3, 50257}, kinds, every_combination({256}, 1.0f)},
      {{DType::kF16, 64, 7}, kinds, every_combination({3}, 0.5f)},
      {{DType::kF32, 1, 151936}, kinds, every_combination({4096}, 1.0f)},
  });
}

TEST_CASE("both algorithms at every cluster size match the reference") {
  // The heuristics reach each algorithm only at some shapes; here each is forced at every
  // power-of-two cluster size and two others, its threads and packs left to the heuristics, on
  // rows of every kind.
  KJIT_REQUIRE_GPU();
  const TopkLayout layouts[] = {{DType::kF32, 3, 50257}, {DType::kBF16, 64, 1000},
                                {DType::kF32, 2, 262144}, {DType::kF16, 5, 128256}};
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  for (TopkAlgorithm algorithm : {TopkAlgorithm::kStream, TopkAlgorithm::kResident})
    for (int cluster : {1, 2, 3, 4, 8, 13, 16})
      for (const TopkLayout& layout : layouts) {
        // The resident kernel holds at most 16384 values a block.
        if (algorithm == TopkAlgorithm::kResident && layout.cols > cluster * 16384) continue;
        TopkUnit unit{layout, all_topk_row_kinds(), {}, TopkConfig{}};
        unit.forced->algorithm = algorithm;
        unit.forced->cluster = cluster;
        // k = 100 leaves the resident kernel 100 to 200 candidates: past the 128 that block 0
        // places alone, within the 256 that every block counts; k = 300, 300 to 600, which
        // every block sorts and places by searching the others' lists.
        for (std::int32_t k : {1, 50, 100, 300, 1024})
          if (k <= layout.cols) unit.calls.push_back(rotated_call(k, n++));
        units.push_back(std::move(unit));
      }
  run_units(std::move(units));
}

TEST_CASE("the stream kernel reads a slice again where its guessed threshold was too high") {
  // From k bucket 512 on (k = 300, 1000 and 1024 here; k = 256 seeds its threshold as before),
  // the stream kernel guesses its threshold from a sample of the first tile; rows whose best
  // values sit at their start make that guess too high, and normal rows beside them keep it.
  // Over one block a row and over clusters, whose later blocks' slices fall too; rows that crowd
  // into one block's slice also make that block cut its candidates to its own best k when the
  // cluster merges (k bucket 512 over 8 blocks, 1024 over 2 and 8).
  KJIT_REQUIRE_GPU();
  const std::vector<TopkRowKind> kinds = {TopkRowKind::kDescending, TopkRowKind::kHotStart,
                                          TopkRowKind::kNormal, TopkRowKind::kNormal10};
  const TopkLayout layouts[] = {{DType::kF32, 64, 128256}, {DType::kF32, 16, 50257},
                                {DType::kBF16, 8, 151936}};
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  for (int cluster : {1, 2, 8})
    for (const TopkLayout& layout : layouts) {
      TopkUnit unit{layout, kinds, {}, TopkConfig{}};
      unit.forced->algorithm = TopkAlgorithm::kStream;
      unit.forced->cluster = cluster;
      for (std::int32_t k : {256, 300, 1000, 1024}) unit.calls.push_back(rotated_call(k, n++));
      units.push_back(std::move(unit));
    }
  run_units(std::move(units));
}

TEST_CASE("huge logits at temperatures 0.5, 1e-3 and 100") {
  // Most probabilities underflow to 0 here; their slots must still follow the logits' order.
  KJIT_REQUIRE_GPU();
  const std::vector<TopkRowKind> kinds = {TopkRowKind::kHuge, TopkRowKind::kNormal, TopkRowKind::kHuge,
                                          TopkRowKind::kFewIntegers, TopkRowKind::kNormal1000};
  const TopkLayout layouts[] = {{DType::kF32, 64, 1000}, {DType::kF32, 3, 128256},
                                {DType::kBF16, 64, 50257}, {DType::kF16, 64, 1000}};
  std::vector<TopkUnit> units;
  for (const TopkLayout& layout : layouts) {
    TopkUnit unit{layout, kinds, {}};
    const std::int32_t k = static_cast<std::int32_t>(std::min<std::int64_t>(layout.cols, 256));
    for (float temperature : {0.5f, 1e-3f, 100.0f})
      for (std::uint32_t flags : kAllFlags)
        unit.calls.push_back({k, flags, DType::kI64, RowKMode::kNone, temperature});
    units.push_back(std::move(unit));
  }
  run_units(std::move(units));
}

TEST_CASE("ties straddling the k-th place, in every dtype") {
  KJIT_REQUIRE_GPU();
  const std::vector<TopkRowKind> kinds = {TopkRowKind::kFewIntegers, TopkRowKind::kAllEqual,
                                          TopkRowKind::kSignedZeros, TopkRowKind::kFewFinite,
                                          TopkRowKind::kNegInfRuns,  TopkRowKind::kNormal};
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16})
    for (std::int64_t cols : {1000, 50257, 128256}) {
      TopkUnit unit{{dtype, 64, cols}, kinds, {}};
      for (std::int32_t k : {50, 1000, 1024, 4096})
        if (k <= cols) unit.calls.push_back(rotated_call(k, n++));
      units.push_back(std::move(unit));
    }
  run_units(std::move(units));
}

TEST_CASE("per-row k values outside [0, k] are clamped") {
  KJIT_REQUIRE_GPU();
  const std::vector<TopkRowKind>& kinds = all_topk_row_kinds();
  std::vector<TopkUnit> units = {{{DType::kF32, 64, 1000}, kinds, {}},
                                 {{DType::kBF16, 64, 50257}, kinds, {}}};
  for (TopkUnit& unit : units)
    for (std::uint32_t flags : kAllFlags)
      for (DType idx : {DType::kI64, DType::kI32}) {
        const std::int32_t k = unit.layout.cols == 1000 ? 50 : 1024;
        unit.calls.push_back({k, flags, idx, RowKMode::kOutOfRange, 1.0f});
      }
  run_units(std::move(units));
}

TEST_CASE("strided and offset rows") {
  // The gaps between rows hold NaN, so a kernel that reads past a row's end ranks a NaN first.
  KJIT_REQUIRE_GPU();
  const TopkLayout layouts[] = {
      {DType::kF32, 64, 1000, 1024, 0},       {DType::kF32, 3, 50257, 50261, 1},
      {DType::kBF16, 64, 1000, 1001, 1},      {DType::kF16, 300, 7, 9, 3},
      {DType::kF32, 7, 1, 3, 0},              {DType::kBF16, 3, 128256, 128264, 3},
      {DType::kF32, 64, 32000, 32003, 2},     {DType::kF16, 64, 50257, 50258, 1},
  };
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  for (const TopkLayout& layout : layouts) {
    TopkUnit unit{layout, all_topk_row_kinds(), {}};
    std::vector<std::int32_t> ks;
    for (std::int32_t k : {1, 50, 1024}) {
      k = static_cast<std::int32_t>(std::min<std::int64_t>(layout.cols, k));
      if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
    }
    for (std::int32_t k : ks) unit.calls.push_back(rotated_call(k, n++));
    units.push_back(std::move(unit));
  }
  run_units(std::move(units));
}

TEST_CASE("the stream kernel reads rows off the alignment from their 16-byte boundaries, at every lead") {
  // Odd strides give every row its own lead, and each offset shifts the first row's: the kernel
  // reads the columns before a row's start (the previous row's last, the padding, which holds NaN,
  // or the slice before its own in a cluster), and none may reach a key or a sum. k = 300 guesses
  // its threshold from runs spread over the slice, each starting before its place. Every dtype is
  // forced to 16 bytes (fp32 takes it only as a tuning candidate); the logits' own pack (the kernel
  // unshifted) beside it.
  KJIT_REQUIRE_GPU();
  std::vector<TopkUnit> units;
  std::size_t n = 0;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::int64_t leads = 16 / static_cast<std::int64_t>(size_of(dtype));
    for (std::int64_t offset = 0; offset < leads; ++offset)
      for (const auto& [cols, stride] : {std::pair<std::int64_t, std::int64_t>{1000, 1003}, {50257, 50257}})
        for (int cluster : {1, 3}) {
          TopkUnit unit{{dtype, 7, cols, stride, offset}, all_topk_row_kinds(), {}, TopkConfig{}};
          unit.forced->algorithm = TopkAlgorithm::kStream;
          unit.forced->cluster = cluster;
          unit.forced->pack = offset == 1 && cluster == 1 ? 1 : static_cast<int>(leads);
          for (std::int32_t k : {1, 50, 300}) unit.calls.push_back(rotated_call(k, n++));
          units.push_back(std::move(unit));
        }
  }
  run_units(std::move(units));
}

TEST_CASE("the same input gives bitwise identical output") {
  // On the default stream, which the other cases do not use.
  KJIT_REQUIRE_GPU();
  Runtime rt;
  const std::uint64_t seed = test_seed();
  const TopkLayout layouts[] = {{DType::kF32, 64, 128256}, {DType::kBF16, 64, 50257}};
  for (const TopkLayout& layout : layouts) {
    TopkBatch batch(layout, TopkRowSource{seed});
    for (const TopkCall& call : {TopkCall{1024, kTopkRenorm, DType::kI64, RowKMode::kInRange, 1.0f},
                                 TopkCall{4096, kTopkLogProbs, DType::kI32, RowKMode::kNone, 0.5f}}) {
      CAPTURE(describe(layout) + " " + describe(call));
      CHECK(run_call(rt, batch, call, nullptr, rows_to_check(layout.rows, seed)) == "");
      const TopkOutput first = batch.read_output(call);
      REQUIRE(run_call(rt, batch, call, nullptr, {}) == "");
      const TopkOutput second = batch.read_output(call);
      CHECK(first.indices == second.indices);
      CHECK(first.probs == second.probs);
    }
  }
}

TEST_CASE("a call on a non-default stream runs after the earlier work of that stream") {
  // The logits are NaN until a copy queued on the stream right before the call restores them:
  // a kernel that did not wait for it would see NaN rows.
  KJIT_REQUIRE_GPU();
  Runtime rt;
  const std::uint64_t seed = test_seed();
  current_or_primary_context();
  Stream stream = create_stream();
  const TopkLayout layout{DType::kF32, 64, 128256};
  TopkBatch batch(layout, TopkRowSource{seed});
  DeviceBuffer& logits = batch.logits_buffer();
  DeviceBuffer saved(logits.bytes());
  KJIT_CU(cuMemcpyDtoDAsync, saved.address(), logits.address(), logits.bytes(), stream.get());
  synchronize(stream.get());
  logits.fill(0xFF);

  const TopkCall call{256, kTopkLogProbs, DType::kI32, RowKMode::kNone, 1.0f};
  batch.prepare(call, stream.get());
  KJIT_CU(cuMemcpyDtoDAsync, logits.address(), saved.address(), logits.bytes(), stream.get());
  rt.softmax_topk(batch.args(call), stream.get());
  synchronize(stream.get());
  CHECK(batch.check(call, rows_to_check(layout.rows, seed)) == "");
}
