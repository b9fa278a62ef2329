// SPDX-License-Identifier: Apache-2.0
// Every algorithm x op compiles under NVRTC for sm_80 and sm_90 at the widths where
// why_not_rowwise accepts it, and yields a loadable cubin with a resource report that fits the
// block. Needs NVRTC only, no GPU; compiles run on a pool of two threads.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "support/compile_pool.h"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

using namespace kjit;

namespace {

constexpr int kPoolThreads = 2;
constexpr std::int64_t kRows = 256;
const std::int64_t kWidths[] = {1, 3, 32, 1000, 1024, 4097, 50257, 262144};
// 16-bit types share the kernels' code paths with f32; a few widths cover their packing.
const std::int64_t kHalfWidths[] = {3, 4097, 50257};
const std::int64_t kMixedWidths[] = {1000, 4097};
const RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};

struct Variant {
  RowwiseProblem problem;
  KernelConfig config;
  int arch = 0;
  std::string error;  // empty when it compiled
  CompiledKernel kernel;
};

std::vector<Algorithm> algorithms_for(int arch) {
  std::vector<Algorithm> algorithms = {Algorithm::kWarp, Algorithm::kBlockRegs, Algorithm::kBlockSmem,
                                       Algorithm::kBlockOnline, Algorithm::kBlockSplit};
  if (arch >= 90) {
    algorithms.push_back(Algorithm::kCluster);
    algorithms.push_back(Algorithm::kClusterSmem);
    algorithms.push_back(Algorithm::kStream);
    algorithms.push_back(Algorithm::kRing);
  }
  return algorithms;
}

std::string describe(const Variant& v) {
  return std::string(to_string(v.problem.op)) + " " + to_string(v.problem.in_dtype) + "->" +
         to_string(v.problem.out_dtype) + " cols=" + std::to_string(v.problem.cols) + " " +
         v.config.to_string() + " sm_" + std::to_string(v.arch);
}

// Adds the variant when the config is valid for the width; returns whether it was added.
bool add_variant(std::vector<Variant>& variants, int arch, Algorithm algorithm, RowOp op, DType dtype_in,
                 DType dtype_out, std::int64_t cols) {
  const int max_pack = 16 / std::max(size_of(dtype_in), size_of(dtype_out));
  const RowwiseProblem problem{op, dtype_in, dtype_out, kRows, cols, max_pack};
  const DeviceProps device = nominal_device(arch);
  const KernelConfig config = complete_rowwise_config(problem, device, KernelConfig{algorithm});
  if (!why_not_rowwise(problem, device, config).empty()) return false;
  variants.push_back({problem, config, arch, {}, {}});
  return true;
}

// Layouts complete_rowwise_config does not fit on its own: block_online split over a cluster.
void add_clustered_online(std::vector<Variant>& variants, RowOp op) {
  const DeviceProps device = nominal_device(90);
  for (std::int64_t cols : kWidths) {
    const RowwiseProblem problem{op, DType::kF32, DType::kF32, kRows, cols, 4};
    const KernelConfig config{Algorithm::kBlockOnline, 4, 256, 256, 4};
    if (why_not_rowwise(problem, device, config).empty()) variants.push_back({problem, config, 90, {}, {}});
  }
}

// The ring kernel's two consumer groups taking turns (complete_rowwise_config fits one group).
void add_two_group_rings(std::vector<Variant>& variants, RowOp op) {
  const DeviceProps device = nominal_device(90);
  auto add = [&](DType dtype, std::int64_t cols) {
    const int pack = 16 / size_of(dtype);
    const RowwiseProblem problem{op, dtype, dtype, kRows, cols, pack};
    const KernelConfig config{Algorithm::kRing, pack, 512, 256, 16};
    if (why_not_rowwise(problem, device, config).empty()) variants.push_back({problem, config, 90, {}, {}});
  };
  for (std::int64_t cols : kWidths) add(DType::kF32, cols);
  for (DType half : {DType::kF16, DType::kBF16})
    for (std::int64_t cols : kHalfWidths) add(half, cols);
}

std::vector<Variant> all_variants() {
  std::vector<Variant> variants;
  for (RowOp op : kOps) add_clustered_online(variants, op), add_two_group_rings(variants, op);
  for (int arch : {80, 90})
    for (Algorithm algorithm : algorithms_for(arch))
      for (RowOp op : kOps) {
        for (std::int64_t cols : kWidths)
          add_variant(variants, arch, algorithm, op, DType::kF32, DType::kF32, cols);
        for (DType half : {DType::kF16, DType::kBF16})
          for (std::int64_t cols : kHalfWidths) add_variant(variants, arch, algorithm, op, half, half, cols);
        // Mixed input and output types convert on load and on store separately.
        if (arch == 90)
          for (std::int64_t cols : kMixedWidths) {
            add_variant(variants, arch, algorithm, op, DType::kF32, DType::kBF16, cols);
            add_variant(variants, arch, algorithm, op, DType::kBF16, DType::kF32, cols);
            add_variant(variants, arch, algorithm, op, DType::kF16, DType::kF32, cols);
          }
      }
  return variants;
}

// What a usable compile must look like; empty when it does.
std::string check_compiled(const Variant& v) {
  if (!v.error.empty()) return "compile failed: " + v.error;
  const CompiledKernel& k = v.kernel;
  if (k.cubin.size() < 4 || std::string(k.cubin.data(), 4) != "\x7f" "ELF") return "cubin is not an ELF image";
  if (k.lowered_name.empty()) return "no lowered name";
  // Where a driver is installed, NVRTC may serve a repeated compile from the CUDA compute cache
  // without the ptxas report; the runtime must still know what the kernel uses.
  // Without a driver there is no compute cache, so the report must be there (ctest hides the
  // driver from this suite); with one, the runtime reads the loaded function's attributes
  // instead (tested on the GPU).
  if (!k.usage.found) return driver_available() ? std::string() : "no ptxas resource report for " + k.lowered_name;
  if (k.usage.registers <= 0) return "0 registers reported";
  const DeviceProps device = nominal_device(v.arch);
  const LaunchShape shape = rowwise_launch_shape(v.problem, v.config, device.sm_count);
  if (k.usage.registers * shape.block > 65536)
    return std::to_string(k.usage.registers) + " registers x " + std::to_string(shape.block) +
           " threads exceed the register file";
  const int smem = k.usage.static_smem + shape.dynamic_smem;
  if (smem > device.max_smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory, the device has " +
           std::to_string(device.max_smem_per_block);
  if (k.key_digest != kernel_key_digest(kernel_key_text(k.spec, v.arch))) return "key digest mismatch";
  return {};
}

}  // namespace

TEST_CASE("every valid algorithm x op x width compiles for sm_80 and sm_90") {
  std::vector<Variant> variants = all_variants();
  const auto start = std::chrono::steady_clock::now();
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return rowwise_kernel_spec(v.problem, v.config); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(variants.size() << " kernels compiled in " << seconds << " s on " << kPoolThreads << " threads");

  std::map<std::string, int> covered;  // algorithm/op/arch -> compiled variants
  int spilling = 0;
  for (const Variant& v : variants) {
    const std::string why = check_compiled(v);
    CHECK_MESSAGE(why.empty(), describe(v) << ": " << why);
    if (!why.empty()) continue;
    ++covered[std::string(to_string(v.config.algorithm)) + "/" + to_string(v.problem.op) + "/sm_" +
              std::to_string(v.arch)];
    const int spills = v.kernel.usage.spill_stores + v.kernel.usage.spill_loads;
    if (spills > 0) {
      ++spilling;
      MESSAGE("spills " << spills << " bytes (" << v.kernel.usage.registers << " registers): " << describe(v));
    }
  }
  // Each algorithm and op must have been exercised on each arch it supports.
  for (int arch : {80, 90})
    for (Algorithm algorithm : algorithms_for(arch))
      for (RowOp op : kOps) {
        const std::string key = std::string(to_string(algorithm)) + "/" + to_string(op) + "/sm_" + std::to_string(arch);
        CHECK_MESSAGE(covered[key] > 0, "nothing compiled for " << key);
      }
  MESSAGE(spilling << " of " << variants.size() << " kernels spill");
}

TEST_CASE("validity follows the documented limits at the sweep's widths") {
  // The sweep skips invalid widths silently, so pin down that it skips only what it should.
  const DeviceProps h100 = nominal_device(90);
  auto valid = [&](Algorithm algorithm, std::int64_t cols) {
    const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, kRows, cols, 4};
    return why_not_rowwise(p, h100, complete_rowwise_config(p, h100, KernelConfig{algorithm})).empty();
  };
  for (std::int64_t cols : kWidths) {
    CAPTURE(cols);
    CHECK(valid(Algorithm::kBlockOnline, cols));
    if (cols <= 1024) CHECK(valid(Algorithm::kWarp, cols));
    if (cols <= 50257) CHECK(valid(Algorithm::kBlockRegs, cols));
    if (cols <= 50257) CHECK(valid(Algorithm::kBlockSmem, cols));
    if (cols >= 4097) CHECK(valid(Algorithm::kCluster, cols));
    CHECK(valid(Algorithm::kRing, cols));  // up to 16 slices of 16 KB a row
  }
  CHECK_FALSE(valid(Algorithm::kWarp, 262144));
  CHECK_FALSE(valid(Algorithm::kBlockSmem, 262144));
}

TEST_CASE("invalid configs are refused before and during compilation") {
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, kRows, 1000, 4};
  const DeviceProps h100 = nominal_device(90);
  const std::string why = why_not_rowwise(p, h100, {Algorithm::kWarp, 4, 128, 64, 1});
  CHECK(why.find("group") != std::string::npos);

  // The kernels' static_asserts are the second line of defence: a config past the register
  // limit fails in NVRTC with the assertion text in the log.
  const RowwiseProblem wide{RowOp::kSoftmax, DType::kF32, DType::kF32, kRows, 262144, 4};
  const KernelConfig too_wide{Algorithm::kWarp, 4, 128, 32, 1};
  CHECK_FALSE(why_not_rowwise(wide, h100, too_wide).empty());
  try {
    compile_kernel(rowwise_kernel_spec(wide, too_wide), 90);
    FAIL("warp compiled with 8192 values per thread");
  } catch (const Error& error) {
    const std::string message = std::string(error.what()).substr(0, 1500);
    CAPTURE(message);
    CHECK(error.status() == Status::kErrorCompile);
    CHECK(error.detail().find("at most 64 values per thread") != std::string::npos);
  }

  // Cluster kernels use sm_90 instructions: building one for sm_80 must fail, not produce a cubin.
  const KernelConfig cluster{Algorithm::kCluster, 4, 256, 256, 2};
  REQUIRE(why_not_rowwise(p, h100, cluster).empty());
  try {
    compile_kernel(rowwise_kernel_spec(p, cluster), 80);
    FAIL("cluster compiled for sm_80");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorCompile);
  }

  // Targets older than sm_80 are refused by name before NVRTC runs (NVRTC itself offers sm_75).
  try {
    compile_kernel(rowwise_kernel_spec(p, {Algorithm::kWarp, 4, 128, 32, 1}), 75);
    FAIL("a kernel compiled for sm_75");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorInvalidArgument);
    CHECK(std::string(error.what()).find("sm_75") != std::string::npos);
    CHECK(std::string(error.what()).find("sm_80") != std::string::npos);
  }
}

TEST_CASE("the register kernels' tuning candidates at benchmark shapes do not spill") {
  // 16-bit rows stay as loaded words (HeldRow) only while the compilers do not keep the floats
  // each pass converts: when they did, log-softmax spilled (WordWidening).
  const DeviceProps h100 = nominal_device(90);
  std::vector<Variant> variants;
  const std::int64_t shapes[][2] = {{8192, 4096}, {2048, 16384}, {1024, 32000}, {64, 262144}};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (const auto& shape : shapes)
      for (RowOp op : kOps) {
        const RowwiseProblem problem{op, dtype, dtype, shape[0], shape[1], 8};
        for (const KernelConfig& config : rowwise_candidates(problem, h100))
          if ((config.algorithm == Algorithm::kBlockRegs || config.algorithm == Algorithm::kCluster) &&
              config.pack == 8 && config.cluster_grid == ClusterGrid::kResident)
            variants.push_back({problem, config, 90, {}, {}});
      }
  // block_split's candidates, every dtype: its shape tells the compiler the registers it may use.
  const std::int64_t split_shapes[][2] = {{2048, 16384}, {1024, 32000}, {512, 65536}};
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32})
    for (const auto& shape : split_shapes)
      for (RowOp op : kOps) {
        const RowwiseProblem problem{op, dtype, dtype, shape[0], shape[1], 16 / size_of(dtype)};
        for (const KernelConfig& config : rowwise_candidates(problem, h100))
          if (config.algorithm == Algorithm::kBlockSplit) variants.push_back({problem, config, 90, {}, {}});
      }
  REQUIRE(variants.size() >= 60);
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return rowwise_kernel_spec(v.problem, v.config); });
  int reported = 0;
  for (const Variant& v : variants) {
    REQUIRE_MESSAGE(v.error.empty(), describe(v) << ": " << v.error);
    if (!v.kernel.usage.found) continue;  // served from a driver's compute cache: no report
    ++reported;
    CHECK_MESSAGE(v.kernel.usage.spill_stores + v.kernel.usage.spill_loads == 0,
                  describe(v) << " spills (" << v.kernel.usage.registers << " registers)");
  }
  MESSAGE(variants.size() << " candidates compiled, " << reported << " with a resource report");
  // Without a driver (ctest hides it from this suite) every compile reports, so every
  // candidate was checked; with one, at least some must have been.
  CHECK(reported > 0);
  if (!driver_available()) CHECK(reported == static_cast<int>(variants.size()));
}
