// SPDX-License-Identifier: Apache-2.0
// The flat_tile kernel compiles under NVRTC for sm_80 and sm_90 at narrow widths, odd ones
// included, for every op and dtype pair, dense rows and rows of narrow gaps, at the fitted layout
// and at the tuner's other ones: a
// loadable cubin whose registers fit the block, whose static shared memory is the span buffers
// the host plans with, and that does not spill. Needs NVRTC only, no GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kjit/kjit.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "support/compile_pool.h"

using namespace kjit;

namespace {

constexpr int kPoolThreads = 2;
constexpr std::int64_t kRows = 65536;
const std::int64_t kWidths[] = {1, 2, 3, 7, 49, 64, 77, 96, 100, 128, 200, 255, 256};
// Mixed pairs convert on each side on its own; a few widths cover their spans.
const std::int64_t kMixedWidths[] = {3, 49, 100, 256};
// Rows of narrow gaps take the gapped kernel (element stores where a unit holds a gap).
const std::int64_t kGappedWidths[] = {3, 49, 255};
// The tuner's other layouts (128 threads, half the group) at the shapes.
const std::int64_t kCandidateWidths[] = {49, 96, 100};
const RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};

struct Variant {
  RowwiseProblem problem;
  KernelConfig config;
  int arch = 0;
  std::string error;
  CompiledKernel kernel;
};

RowwiseProblem dense_problem(RowOp op, DType in, DType out, std::int64_t cols) {
  RowwiseProblem p{op, in, out, kRows, cols, 1};
  p.dense = true;
  return p;
}

std::string describe(const Variant& v) {
  return std::string(to_string(v.problem.op)) + " " + to_string(v.problem.in_dtype) + "->" +
         to_string(v.problem.out_dtype) + " cols=" + std::to_string(v.problem.cols) +
         (v.problem.narrow_gaps ? " gapped " : " ") +
         v.config.to_string() + " sm_" + std::to_string(v.arch);
}

std::vector<Variant> all_variants() {
  std::vector<Variant> variants;
  auto add = [&](int arch, RowOp op, DType in, DType out, std::int64_t cols, bool gapped = false) {
    RowwiseProblem p = dense_problem(op, in, out, cols);
    p.dense = !gapped;
    p.narrow_gaps = gapped;
    const DeviceProps d = nominal_device(arch);
    const KernelConfig c = complete_rowwise_config(p, d, KernelConfig{Algorithm::kFlatTile});
    REQUIRE_MESSAGE(why_not_rowwise(p, d, c).empty(), c.to_string() << " cols=" << cols);
    variants.push_back({p, c, arch, {}, {}});
  };
  for (int arch : {80, 90})
    for (RowOp op : kOps) {
      for (std::int64_t cols : kWidths)
        for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) add(arch, op, dtype, dtype, cols);
      for (std::int64_t cols : kMixedWidths) {
        add(arch, op, DType::kBF16, DType::kF32, cols);
        add(arch, op, DType::kF16, DType::kF32, cols);
        add(arch, op, DType::kF32, DType::kBF16, cols);
      }
      for (std::int64_t cols : kGappedWidths)
        for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) add(arch, op, dtype, dtype, cols, true);
      add(arch, op, DType::kBF16, DType::kF32, 49, true);
      add(arch, op, DType::kF32, DType::kBF16, 49, true);
    }
  const DeviceProps h100 = nominal_device(90);
  for (std::int64_t cols : kCandidateWidths)
    for (DType dtype : {DType::kF16, DType::kF32}) {
      const RowwiseProblem p = dense_problem(RowOp::kSoftmax, dtype, dtype, cols);
      std::vector<KernelConfig> tiles;
      rowwise::add_flat_tile_candidates(p, tiles);
      for (const KernelConfig& c : tiles)
        if (c != rowwise::fit_flat_tile(p) && why_not_rowwise(p, h100, c).empty())
          variants.push_back({p, c, 90, {}, {}});
    }
  return variants;
}

std::string check_compiled(const Variant& v) {
  if (!v.error.empty()) return "compile failed: " + v.error;
  const CompiledKernel& k = v.kernel;
  if (k.cubin.size() < 4 || std::string(k.cubin.data(), 4) != "\x7f" "ELF") return "cubin is not an ELF image";
  // Without a driver (ctest hides it) every compile carries its ptxas report; with one, NVRTC
  // may serve it from the compute cache without.
  if (!k.usage.found) return driver_available() ? std::string() : "no ptxas resource report";
  if (k.usage.registers * v.config.threads > kRegistersPerSm) return "registers exceed the register file";
  if (k.usage.static_smem != flat_tile_smem_bytes(v.problem, v.config))
    return "static shared memory " + std::to_string(k.usage.static_smem) + " is not the planned " +
           std::to_string(flat_tile_smem_bytes(v.problem, v.config));
  if (k.usage.spill_stores + k.usage.spill_loads != 0)
    return "spills (" + std::to_string(k.usage.registers) + " registers)";
  return {};
}

}  // namespace

TEST_CASE("flat_tile compiles for sm_80 and sm_90 at narrow widths, every op and dtype pair") {
  std::vector<Variant> variants = all_variants();
  REQUIRE(variants.size() >= 300);
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return rowwise_kernel_spec(v.problem, v.config); });
  int max_registers = 0;
  for (const Variant& v : variants) {
    const std::string why = check_compiled(v);
    CHECK_MESSAGE(why.empty(), describe(v) << ": " << why);
    if (v.kernel.usage.found && v.kernel.usage.registers > max_registers) max_registers = v.kernel.usage.registers;
  }
  MESSAGE(variants.size() << " flat_tile kernels compiled; at most " << max_registers << " registers");
}

TEST_CASE("a flat_tile config the kernel refuses fails in NVRTC with its reason") {
  // Validity refuses 32 KB spans each way at 1024 threads; the kernel's static_assert too.
  RowwiseProblem p = dense_problem(RowOp::kSoftmax, DType::kF32, DType::kF32, 256);
  const KernelConfig too_big{Algorithm::kFlatTile, 1, 1024, 32, 1};
  CHECK_FALSE(why_not_rowwise(p, nominal_device(90), too_big).empty());
  try {
    compile_kernel(rowwise_kernel_spec(p, too_big), 90);
    FAIL("flat_tile compiled with 64 KB of static shared memory");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorCompile);
    CHECK(error.detail().find("span buffers exceed 48 KB") != std::string::npos);
  }
}
