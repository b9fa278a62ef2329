// SPDX-License-Identifier: Apache-2.0
// Sizes where 32-bit index arithmetic breaks: more than 2^31 elements in one call (and more
// than 4 GB of bytes), rows of a million columns, and millions of rows.
#include <doctest/doctest.h>

#include <chrono>
#include <initializer_list>
#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

using namespace kjit;
using namespace kjit::test;

namespace {

std::size_t free_device_memory() {
  std::size_t free = 0, total = 0;
  KJIT_CU(cuMemGetInfo, &free, &total);
  return free;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs one call (the automatic path when `config` is null) and checks `rows`.
std::string run_and_check(Runtime& rt, RowBatch& batch, RowOp op, const KernelConfig* config,
                          const std::vector<std::int64_t>& rows, CUstream stream) {
  float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  batch.reset(stream);
  try {
    if (config == nullptr) run_auto(rt, op, batch.args(), scale, stream);
    else rt.run_with_config(op, batch.args(), scale, *config, stream);
    synchronize(stream);
  } catch (const Error& error) {
    return std::string("threw ") + error.what();
  }
  return batch.check(op, rows);
}

}  // namespace

// Needs 4.3 GB of free device memory: a ctest entry of its own (gpu_large_free_memory).
TEST_CASE("more than 2^31 elements in one call, in place" * doctest::test_suite("free_memory") *
          doctest::skip()) {
  KJIT_REQUIRE_GPU();
  constexpr std::int64_t kRows = 33000, kCols = 65536;  // 2.16e9 bf16 elements, 4.3 GB
  const std::size_t bytes = static_cast<std::size_t>(kRows * kCols) * 2;
  if (free_device_memory() < bytes + (std::size_t{512} << 20))
    KJIT_SKIP_GPU_CASE("needs " + std::to_string(bytes >> 20) + " MiB of free device memory");
  BatchLayout layout{DType::kBF16, DType::kBF16, kRows, kCols};
  layout.in_place = true;
  const auto start = std::chrono::steady_clock::now();
  RowBatch batch(layout, test_seed());
  MESSAGE("generated and uploaded " << (bytes >> 20) << " MiB in " << seconds_since(start) << " s");

  // Rows at the start, around element 2^31 (row 32768), and at the end, plus a random sample.
  std::vector<std::int64_t> rows = rows_to_check(kRows, test_seed());
  for (std::int64_t row : std::initializer_list<std::int64_t>{0, 1, 7, 16500, 32766, 32767, 32768, 32769,
                                                               32775, kRows - 8, kRows - 1})
    rows.push_back(row);
  REQUIRE(std::int64_t{32768} * kCols == std::int64_t{1} << 31);

  Runtime rt;
  Stream stream = create_stream();
  CHECK_MESSAGE(run_and_check(rt, batch, RowOp::kSoftmax, nullptr, rows, stream.get()) == "",
                "softmax, automatic (" << rt.explain(RowOp::kSoftmax, batch.args()).config.to_string() << ")");
  const KernelConfig online{Algorithm::kBlockOnline};
  CHECK_MESSAGE(run_and_check(rt, batch, RowOp::kLogSoftmax, &online, rows, stream.get()) == "",
                "log_softmax, block_online");
  MESSAGE("done in " << seconds_since(start) << " s");
}

TEST_CASE("rows of a million columns") {
  KJIT_REQUIRE_GPU();
  constexpr std::int64_t kCols = std::int64_t{1} << 20;
  const DeviceProps device = current_device();
  Runtime rt;
  Stream stream = create_stream();
  RowBatch batch(BatchLayout{DType::kF32, DType::kF32, 3, kCols}, test_seed());
  const std::vector<std::int64_t> rows = {0, 1, 2};

  std::vector<std::pair<std::string, KernelConfig>> configs = {
      {"block_online", KernelConfig{Algorithm::kBlockOnline}}};
  // A 16-block cluster holds a 1M-column row in registers (sm_90 allows 16 as a non-portable size).
  if (device.arch >= 90) configs.push_back({"cluster x16", KernelConfig{Algorithm::kCluster, 0, 0, 0, 16}});

  for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale}) {
    CAPTURE(std::string(to_string(op)));
    CHECK(run_and_check(rt, batch, op, nullptr, rows, stream.get()) == "");
    for (const auto& named : configs) {
      const std::string& name = named.first;  // CAPTURE takes no structured binding (C++17)
      CAPTURE(name);
      CHECK(run_and_check(rt, batch, op, &named.second, rows, stream.get()) == "");
    }
  }
  // Registers and shared memory cannot hold such a row in one block.
  for (Algorithm algorithm : {Algorithm::kWarp, Algorithm::kBlockRegs, Algorithm::kBlockSmem}) {
    CAPTURE(std::string(to_string(algorithm)));
    try {
      rt.run_with_config(RowOp::kSoftmax, batch.args(), nullptr, KernelConfig{algorithm}, stream.get());
      synchronize(stream.get());
      FAIL("a 1M-column row ran in one block's registers or shared memory");
    } catch (const Error& error) {
      CHECK(error.status() == Status::kErrorInvalidConfig);
    }
  }
}

TEST_CASE("millions of short rows") {
  KJIT_REQUIRE_GPU();
  constexpr std::int64_t kRows = (std::int64_t{1} << 21) + 3;
  Runtime rt;
  Stream stream = create_stream();
  for (DType dtype : {DType::kF32, DType::kF16}) {
    RowBatch batch(BatchLayout{dtype, dtype, kRows, 7}, test_seed());
    const std::vector<std::int64_t> rows = rows_to_check(kRows, test_seed());
    CAPTURE(std::string(to_string(dtype)));
    for (Algorithm algorithm : {Algorithm::kAuto, Algorithm::kWarp, Algorithm::kBlockOnline}) {
      CAPTURE(std::string(to_string(algorithm)));
      const KernelConfig config{algorithm};
      const KernelConfig* forced = algorithm == Algorithm::kAuto ? nullptr : &config;
      CHECK(run_and_check(rt, batch, RowOp::kSoftmax, forced, rows, stream.get()) == "");
      CHECK(run_and_check(rt, batch, RowOp::kReduceScale, forced, rows, stream.get()) == "");
    }
  }
}
