// SPDX-License-Identifier: Apache-2.0
// Every class of attention kernel compiles under NVRTC for sm_80 and sm_90 without spilling: each
// (d, dv), M and N over {1, 7, 16, 49, 64, 100, 128, 197, 256} (the diagonal and a few mixed
// pairs), every bias and mask kind, causal, fp16 and bf16, the heuristic's picks and every
// tuning candidate of two shapes. Needs NVRTC only, no GPU.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "kernel_sources/attention_shape.cuh"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/attention/attention_family.h"
#include "runtime/ops/attention/attention_heuristics.h"
#include "runtime/ops/attention/attention_kernels.h"
#include "support/compile_pool.h"

using namespace kjit;

namespace {

constexpr int kPoolThreads = 2;

struct Variant {
  AttentionProblem problem;
  AttentionConfig config;
  int arch = 0;
  std::string error;
  CompiledKernel kernel;
};

std::string describe(const Variant& v) {
  return AttentionFamily::describe(v.problem).dump() + " " + v.config.to_string() + " sm_" + std::to_string(v.arch);
}

AttentionProblem problem_of(DType dtype, int m, int n, int d, int dv, int bias = 0, int mask = 0, bool causal = false) {
  AttentionProblem p;
  p.dtype = dtype;
  p.m = m;
  p.n = n;
  p.d = d;
  p.dv = dv;
  p.bias_kind = bias;
  p.mask_kind = mask;
  p.causal = causal;
  p.batch = p.rows = 4096;
  return p;
}

void add_pick(std::vector<Variant>& variants, int arch, const AttentionProblem& problem) {
  const AttentionConfig config = choose_attention_config(problem, nominal_device(arch));
  REQUIRE_MESSAGE(why_not_attention(problem, nominal_device(arch), config).empty(), config.to_string());
  variants.push_back({problem, config, arch, {}, {}});
}

std::vector<Variant> all_variants() {
  std::vector<Variant> variants;
  const int tokens[] = {1, 7, 16, 49, 64, 100, 128, 197, 256};
  const int dims[] = {16, 32, 64, 128};
  for (int arch : {80, 90}) {
    const DType dtype = arch == 80 ? DType::kF16 : DType::kBF16;
    const DType other = arch == 80 ? DType::kBF16 : DType::kF16;
    for (int d : dims)
      for (int dv : dims) add_pick(variants, arch, problem_of((d + dv) % 64 ? dtype : other, 49, 49, d, dv));
    for (int t : tokens) add_pick(variants, arch, problem_of(other, t, t, 64, 64, kAddendF32, kAddendF16));
    add_pick(variants, arch, problem_of(dtype, 7, 256, 128, 128));
    add_pick(variants, arch, problem_of(dtype, 256, 7, 16, 16, 0, 0, true));
    add_pick(variants, arch, problem_of(dtype, 100, 197, 32, 128, kAddendBF16, 0, true));
    for (int bias = 0; bias <= 3; ++bias)
      add_pick(variants, arch, problem_of(dtype, 49, 49, 32, 32, bias, (bias + arch / 10) % 4));
    add_pick(variants, arch, problem_of(dtype, 197, 197, 64, 64, 0, 0, true));
    add_pick(variants, arch, problem_of(other, 64, 128, 64, 64, kAddendF16, kAddendBF16, true));
  }
  // Every tuning candidate of two shapes on sm_90.
  for (const AttentionProblem& p : {problem_of(DType::kF16, 49, 49, 32, 32, kAddendF32, kAddendF32),
                                    problem_of(DType::kBF16, 128, 128, 128, 128)})
    for (const AttentionConfig& config : attention_candidates(p, nominal_device(90)))
      variants.push_back({p, config, 90, {}, {}});
  return variants;
}

std::string check_compiled(const Variant& v) {
  if (!v.error.empty()) return "compile failed: " + v.error;
  const CompiledKernel& k = v.kernel;
  if (k.cubin.size() < 4 || std::string(k.cubin.data(), 4) != "\x7f" "ELF") return "cubin is not an ELF image";
  if (!k.usage.found) return driver_available() ? std::string() : "no ptxas resource report";
  if (k.usage.spill_stores + k.usage.spill_loads > 0)
    return "spills (" + std::to_string(k.usage.registers) + " registers)";
  const int threads = 32 * v.config.warps * v.config.problems;
  if (k.usage.registers * threads > 65536)
    return std::to_string(k.usage.registers) + " registers x " + std::to_string(threads) + " threads";
  const int smem = k.usage.static_smem + attention_launch_shape(v.problem, v.config, 132).dynamic_smem;
  if (smem > nominal_device(v.arch).max_smem_per_block) return "needs " + std::to_string(smem) + " bytes of shared memory";
  return {};
}

}  // namespace

TEST_CASE("every attention kernel class compiles for sm_80 and sm_90 without spills") {
  std::vector<Variant> variants = all_variants();
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return attention_kernel_spec(v.problem, v.config); });
  std::set<int> warps_seen, stages_seen;
  int most_registers = 0;
  for (const Variant& v : variants) {
    const std::string why = check_compiled(v);
    CHECK_MESSAGE(why.empty(), describe(v) << ": " << why);
    warps_seen.insert(v.config.warps);
    stages_seen.insert(v.config.stages);
    if (v.kernel.usage.found) most_registers = std::max(most_registers, v.kernel.usage.registers);
  }
  MESSAGE(variants.size() << " attention kernels compiled; at most " << most_registers << " registers");
  CHECK(warps_seen == std::set<int>{1, 2, 4, 8});
  CHECK(stages_seen == std::set<int>{1, 2});
}
