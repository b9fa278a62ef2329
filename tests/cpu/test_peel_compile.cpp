// SPDX-License-Identifier: Apache-2.0
// The peeled kernels (KernelConfig::peel: warp, block_regs, block_split, block_online) compile under NVRTC for
// sm_80 and sm_90 at every pack each dtype pair allows, floats and 16-bit words held, for every op, and the
// slice kernels (block_smem, cluster, cluster_smem, ring) at the widest pack for sm_90;
// the shift of each side is a run-time value, so one kernel serves every shift class. The tuner's
// peeled candidates at misaligned shapes of real models compile without spilling. Needs NVRTC only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "support/compile_pool.h"

using namespace kjit;

namespace {

constexpr int kPoolThreads = 2;

struct Variant {
  RowwiseProblem problem;
  KernelConfig config;
  int arch = 0;
  std::string error;  // empty when it compiled
  CompiledKernel kernel;
};

struct Pair {
  DType in, out;
};
constexpr Pair kPairs[] = {{DType::kF32, DType::kF32},
                           {DType::kBF16, DType::kBF16},
                           {DType::kF16, DType::kF16},
                           {DType::kBF16, DType::kF32},
                           {DType::kF32, DType::kBF16}};

int widest(const Pair& p) { return 16 / std::max(size_of(p.in), size_of(p.out)); }

std::string describe(const Variant& v) {
  return std::string(to_string(v.problem.op)) + " " + to_string(v.problem.in_dtype) + "->" +
         to_string(v.problem.out_dtype) + " cols=" + std::to_string(v.problem.cols) + " max_pack=" +
         std::to_string(v.problem.max_pack) + " " + v.config.to_string() + " sm_" + std::to_string(v.arch);
}

// A peeled config of `algorithm` at `pack`, completed for a problem whose rows allow pack 1.
void add(std::vector<Variant>& variants, int arch, Algorithm algorithm, RowOp op, const Pair& pair,
         std::int64_t cols, int pack) {
  const RowwiseProblem problem{op, pair.in, pair.out, 256, cols, 1};
  const DeviceProps device = nominal_device(arch);
  KernelConfig partial{algorithm};
  partial.pack = pack;
  partial.peel = true;
  const KernelConfig config = complete_rowwise_config(problem, device, partial);
  const std::string why = why_not_rowwise(problem, device, config);
  REQUIRE_MESSAGE(why.empty(), config.to_string() << ": " << why);
  variants.push_back({problem, config, arch, {}, {}});
}

// Widths where a warp and a block hold the row: odd, so every row of a dense batch has its own
// shift; the block's is wide enough that 16-bit rows are held as words.
constexpr std::int64_t kWarpCols = 77;
constexpr std::int64_t kBlockCols = 4097;
// Rows that clusters of blocks share, odd.
constexpr std::int64_t kClusterCols = 40001;

std::vector<Variant> every_pack() {
  std::vector<Variant> variants;
  for (int arch : {80, 90})
    for (const Pair& pair : kPairs)
      for (Algorithm algorithm :
           {Algorithm::kWarp, Algorithm::kBlockRegs, Algorithm::kBlockSplit, Algorithm::kBlockOnline}) {
        const std::int64_t cols = algorithm == Algorithm::kWarp ? kWarpCols : kBlockCols;
        // block_split's asynchronous copies move 4 bytes or more.
        const int first_pack = algorithm == Algorithm::kBlockSplit ? 4 / size_of(pair.in) : 1;
        for (int pack = first_pack; pack <= widest(pair); pack *= 2)
          add(variants, arch, algorithm, RowOp::kSoftmax, pair, cols, pack);
        for (RowOp op : {RowOp::kLogSoftmax, RowOp::kReduceScale})
          add(variants, arch, algorithm, op, pair, cols, widest(pair));
      }
  // The slice kernels at the pick's pack: clusters need sm_90, and block_smem shares their code.
  for (const Pair& pair : kPairs)
    for (Algorithm algorithm : {Algorithm::kBlockSmem, Algorithm::kCluster, Algorithm::kClusterSmem})
      for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale})
        add(variants, 90, algorithm, op, pair, algorithm == Algorithm::kBlockSmem ? kBlockCols : kClusterCols,
            widest(pair));
  // The ring moves 16-byte units of same-size types.
  for (const Pair& pair : kPairs)
    for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale})
      if (size_of(pair.in) == size_of(pair.out))
        add(variants, 90, Algorithm::kRing, op, pair, kClusterCols, widest(pair));
  return variants;
}

// The widest pack a dense batch of `cols` allows (pointers aligned, stride == cols).
int dense_pack(const Pair& pair, std::int64_t cols) {
  int pack = widest(pair);
  while (pack > 1 && cols % pack != 0) pack /= 2;
  return pack;
}

std::string check_compiled(const Variant& v) {
  if (!v.error.empty()) return "compile failed: " + v.error;
  if (v.kernel.cubin.size() < 4 || std::string(v.kernel.cubin.data(), 4) != "\x7f" "ELF") return "no ELF cubin";
  if (v.kernel.lowered_name.empty()) return "no lowered name";
  return {};
}

}  // namespace

TEST_CASE("peeled warp, block_regs, block_split and block_online kernels compile at every pack for sm_80 and sm_90, "
          "and the slice kernels at the widest") {
  std::vector<Variant> variants = every_pack();
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return rowwise_kernel_spec(v.problem, v.config); });
  int words = 0;
  for (const Variant& v : variants) {
    CHECK_MESSAGE(check_compiled(v).empty(), describe(v) << ": " << check_compiled(v));
    CHECK(v.kernel.spec.name_expression.find(", true>") != std::string::npos);
    if (holds_input_words(size_of(v.problem.in_dtype), v.config.pack, v.config.group)) ++words;
  }
  CHECK(words > 0);  // 16-bit rows held as loaded words take their own peeled loads
  MESSAGE(variants.size() << " peeled kernels compiled");
}

TEST_CASE("the tuner's peeled candidates at odd widths of real models compile without spilling") {
  const DeviceProps h100 = nominal_device(90);
  // The last: rows that clusters share, whose slices are peeled too; of its candidates only the
  // slice kernels' (block_online a block a row at 1024 threads, a tuning candidate, spills 56 bytes
  // of such bf16 rows: docs/experiments/narrow-and-misaligned-rows.md).
  const std::int64_t shapes[][2] = {{65536, 49}, {100000, 99}, {16384, 197}, {8192, 577}, {4096, 4095},
                                    {4096, 50257}, {8192, 32001}, {32, 250001}};
  const auto slice_kernel = [](const KernelConfig& c) {
    return c.algorithm == Algorithm::kCluster || c.algorithm == Algorithm::kClusterSmem ||
           c.algorithm == Algorithm::kRing;
  };
  std::vector<Variant> variants;
  for (const Pair& pair : {kPairs[0], kPairs[1]})
    for (const auto& shape : shapes)
      for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax}) {
        const RowwiseProblem p{op, pair.in, pair.out, shape[0], shape[1], dense_pack(pair, shape[1])};
        const bool slices_only = shape[1] == 250001;
        for (const KernelConfig& c : rowwise_candidates(p, h100))
          if (c.peel && (!slices_only || slice_kernel(c))) variants.push_back({p, c, 90, {}, {}});
      }
  REQUIRE(variants.size() >= 20);
  CHECK(std::count_if(variants.begin(), variants.end(), [&](const Variant& v) { return slice_kernel(v.config); }) >=
        4);
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return rowwise_kernel_spec(v.problem, v.config); });
  int reported = 0;
  for (const Variant& v : variants) {
    REQUIRE_MESSAGE(check_compiled(v).empty(), describe(v) << ": " << check_compiled(v));
    if (!v.kernel.usage.found) continue;  // served from a driver's compute cache: no report
    ++reported;
    CHECK_MESSAGE(v.kernel.usage.spill_stores + v.kernel.usage.spill_loads == 0,
                  describe(v) << " spills (" << v.kernel.usage.registers << " registers)");
  }
  MESSAGE(variants.size() << " peeled candidates compiled, " << reported << " with a resource report");
  CHECK(reported > 0);
  if (!driver_available()) CHECK(reported == static_cast<int>(variants.size()));
}

TEST_CASE("the kernels size a peeled share as the host does") {
  // A warp of fp32 rows at pack 4 holds 64 values a thread at most: 2045 columns span 2048 at
  // the worst shift and fit, 2046 span 2049 and do not, on both sides of the check.
  const DeviceProps h100 = nominal_device(90);
  KernelConfig warp{Algorithm::kWarp, 4, 128, 32, 1};
  warp.peel = true;
  const RowwiseProblem fits{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 2045, 1};
  const RowwiseProblem past{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 2046, 1};
  REQUIRE(why_not_rowwise(fits, h100, warp).empty());
  CHECK_FALSE(why_not_rowwise(past, h100, warp).empty());
  CHECK(compile_kernel(rowwise_kernel_spec(fits, warp), 90).lowered_name.size() > 0);
  try {
    compile_kernel(rowwise_kernel_spec(past, warp), 90);
    FAIL("a peeled warp compiled with more than 64 values a thread");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorCompile);
    CHECK(error.detail().find("at most 64 values per thread") != std::string::npos);
  }
}
