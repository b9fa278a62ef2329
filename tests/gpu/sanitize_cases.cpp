// SPDX-License-Identifier: Apache-2.0
// kjit_sanitize_cases: one forced config of one kernel family per invocation, on a shape small
// enough for compute-sanitizer's racecheck yet wide enough for the family's cluster and ring
// paths, checked against the float64 reference. scripts/sanitize_gpu.sh runs every case under
// memcheck, racecheck and synccheck.
//   kjit_sanitize_cases --list              the case names
//   kjit_sanitize_cases --describe [NAME]   what NAME (or every case) runs; needs no GPU
//   kjit_sanitize_cases NAME [--launches N] runs it N times (default 2) and checks the last
//   kjit_sanitize_cases NAME --cubin FILE [--arch N]
//                                           writes the cubin of the kernel NAME forces, compiled
//                                           as the runtime compiles it for this GPU (or for sm_N,
//                                           which needs no GPU): the offsets racecheck reports
//                                           are its instructions (nvdisasm -c FILE)
// Exit status: 0 right, 1 wrong or failed, 2 bad arguments, 3 no usable GPU.

// The harness's helpers are built for doctest suites; this program has its own main and calls
// none of those that report through doctest.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "attention_batch.h"
#include "sanitize_case_list.h"
#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/attention/attention_family.h"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/topk/topk_family.h"
#include "topk_batch.h"

using namespace kjit;
using namespace kjit::test;
using namespace kjit::sanitize;

namespace {

// KJIT_TEST_SEED when set, else a fixed seed: a sanitizer run is repeated as it was.
std::uint64_t seed() {
  const char* fixed = std::getenv("KJIT_TEST_SEED");
  return fixed != nullptr && *fixed != '\0' ? std::strtoull(fixed, nullptr, 0) : 41;
}

std::string run_row_case(Runtime& rt, const RowCase& c, int launches) {
  RowBatch batch(BatchLayout{c.dtype, c.dtype, c.rows, c.cols, c.in_stride, c.out_stride, c.in_offset, c.out_offset},
                 seed());
  float* scale = c.op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  batch.reset(nullptr);
  for (int i = 0; i < launches; ++i) rt.run_with_config(c.op, batch.args(), scale, c.config, nullptr);
  synchronize(nullptr);
  return batch.check(c.op, rows_to_check(c.rows, seed()));
}

std::string run_topk_case(Runtime& rt, const TopkCase& c, int launches) {
  TopkBatch batch(TopkLayout{c.dtype, c.rows, c.cols, c.row_stride, c.in_offset}, TopkRowSource{seed()});
  TopkCall call;
  call.k = c.k;
  batch.prepare(call, nullptr);
  for (int i = 0; i < launches; ++i) rt.softmax_topk_with_config(batch.args(call), c.config, nullptr);
  synchronize(nullptr);
  return batch.check(call, rows_to_check(c.rows, seed()));
}

std::string run_attention_case(Runtime& rt, const AttentionRun& c, int launches) {
  AttentionBatch batch(c.shape, seed());
  batch.poison(nullptr);
  for (int i = 0; i < launches; ++i) rt.attention_with_config(batch.args(), c.config, nullptr);
  synchronize(nullptr);
  return batch.check();
}

int usage(const char* message) {
  std::fprintf(stderr,
               "kjit_sanitize_cases: %s\nusage: kjit_sanitize_cases --list | --describe [NAME] | NAME [--launches N] | "
               "NAME --cubin FILE [--arch N]\n",
               message);
  return 2;
}

// The call a row case makes, at addresses aligned as cudaMalloc's (256 bytes) plus the case's
// offsets, so that validation derives the problem (its widest pack) the case's run gets.
RowwiseArgs row_case_args(const RowCase& c) {
  const std::int64_t size = size_of(c.dtype);
  const std::uintptr_t in_base = std::uintptr_t{1} << 32, out_base = std::uintptr_t{2} << 32;
  RowwiseArgs args;
  args.in = reinterpret_cast<const void*>(in_base + static_cast<std::uintptr_t>(c.in_offset * size));
  args.out = reinterpret_cast<void*>(out_base + static_cast<std::uintptr_t>(c.out_offset * size));
  args.in_row_stride = c.in_stride != 0 ? c.in_stride : c.cols;
  args.out_row_stride = c.out_stride != 0 ? c.out_stride : c.cols;
  args.rows = c.rows;
  args.cols = c.cols;
  args.in_dtype = args.out_dtype = c.dtype;
  return args;
}

// The kernel a case forces, compiled as the dispatcher compiles it: the config completed for
// the device, then the spec of the pair.
template <typename Family>
CompiledKernel compile_forced(const typename Family::Problem& problem, const typename Family::Config& config,
                              const DeviceProps& device) {
  return compile_kernel(Family::kernel_spec(problem, Family::complete(problem, device, config)), device.arch);
}

CompiledKernel compile_case(const Case& c, const DeviceProps& device) {
  if (c.row) {
    const RowCase& r = *c.row;
    const float* scale =
        r.op == RowOp::kReduceScale ? reinterpret_cast<const float*>(std::uintptr_t{3} << 32) : nullptr;
    return compile_forced<RowwiseFamily>(validate_rowwise(r.op, row_case_args(r), scale), r.config, device);
  }
  if (c.topk) {
    const TopkCase& t = *c.topk;
    const nlohmann::json call = {{"op", "softmax_topk"}, {"dtype", to_string(t.dtype)}, {"rows", t.rows},
                                 {"cols", t.cols}, {"k", t.k}};
    return compile_forced<TopkFamily>(TopkFamily::problem_from_json(call), t.config, device);
  }
  // The call's fields describe packed [B, H, N, D] operands, as these cases' are.
  const AttentionCase& a = c.attention->shape;
  nlohmann::json call = {{"op", "attention"}, {"dtype", to_string(a.dtype)}, {"batch", a.batch},
                         {"heads", a.heads}, {"m", a.m}, {"n", a.n}, {"d", a.d}, {"dv", a.dv},
                         {"mask_windows", a.mask_windows}, {"causal", a.causal}};
  if (a.bias) call["bias_dtype"] = to_string(a.bias_dtype);
  if (a.mask) call["mask_dtype"] = to_string(a.mask_dtype);
  return compile_forced<AttentionFamily>(AttentionFamily::problem_from_json(call), c.attention->config, device);
}

// Writes the cubin of the kernel a case forces; arch 0: this GPU's, with its own properties.
// The key names the cache entry of the same kernel, which a run of the case has stored.
int write_cubin(const Case& c, const std::string& path, int arch) {
  if (c.attention && (c.attention->shape.interleaved || c.attention->shape.row_pad != 0)) {
    std::fprintf(stderr, "%s: --cubin describes packed operands only\n", c.name);
    return 2;
  }
  std::string why;
  if (arch == 0 && !gpu_available(&why)) {
    std::fprintf(stderr, "%s: no usable GPU (%s): name the target with --arch\n", c.name, why.c_str());
    return 3;
  }
  try {
    const CompiledKernel kernel = compile_case(c, arch == 0 ? current_device() : nominal_device(arch));
    std::ofstream file(path, std::ios::binary);
    file.write(kernel.cubin.data(), static_cast<std::streamsize>(kernel.cubin.size()));
    if (!file.flush()) {
      std::fprintf(stderr, "%s: cannot write %s\n", c.name, path.c_str());
      return 1;
    }
    std::printf("%s: %s for sm_%d, key %s, %zu bytes in %s\n", c.name, kernel.spec.name_expression.c_str(),
                kernel.arch, kernel.key_digest.c_str(), kernel.cubin.size(), path.c_str());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: --cubin: %s\n", c.name, error.what());
    return 1;
  }
}

int run(const Case& c, int launches) {
  std::string why;
  if (!gpu_available(&why)) {
    std::fprintf(stderr, "%s: no usable GPU: %s\n", c.name, why.c_str());
    return 3;
  }
  std::printf("%s\n", describe(c).c_str());
  std::fflush(stdout);
  try {
    Runtime rt;
    why = c.row         ? run_row_case(rt, *c.row, launches)
          : c.attention ? run_attention_case(rt, *c.attention, launches)
                        : run_topk_case(rt, *c.topk, launches);
  } catch (const std::exception& error) {
    why = std::string("threw ") + error.what();
  }
  if (!why.empty()) {
    std::printf("%s: FAILED: %s\n", c.name, why.c_str());
    return 1;
  }
  std::printf("%s: ok (%d launches, output matches the reference)\n", c.name, launches);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no case named");
  if (args[0] == "--list") {
    if (args.size() != 1) return usage("--list takes nothing more");
    for (const Case& c : cases()) std::printf("%s\n", c.name);
    return 0;
  }
  if (args[0] == "--describe") {
    if (args.size() > 2) return usage("--describe takes one case name at most");
    if (args.size() == 2) {
      const Case* c = find_case(args[1]);
      if (c == nullptr) return usage(("no case named " + args[1]).c_str());
      std::printf("%s\n", describe(*c).c_str());
      return 0;
    }
    for (const Case& c : cases()) std::printf("%s\n", describe(c).c_str());
    return 0;
  }
  const Case* c = find_case(args[0]);
  if (c == nullptr) return usage(("no case named " + args[0]).c_str());
  int launches = 2, arch = 0;
  std::string cubin;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if ((flag != "--launches" && flag != "--cubin" && flag != "--arch") || i + 1 == args.size())
      return usage(("unexpected " + flag).c_str());
    std::string value = args[++i];
    if (flag == "--cubin") {
      cubin = value;
      continue;
    }
    if (flag == "--arch" && value.rfind("sm_", 0) == 0) value = value.substr(3);
    char* end = nullptr;
    const long parsed = std::strtol(value.c_str(), &end, 10);
    const bool valid = end != value.c_str() && *end == '\0';
    if (flag == "--arch") {
      if (!valid || parsed < 1) return usage("--arch takes an arch such as 90 or sm_90");
      arch = static_cast<int>(parsed);
    } else {
      if (!valid || parsed < 1 || parsed > 100) return usage("--launches takes a count from 1 to 100");
      launches = static_cast<int>(parsed);
    }
  }
  if (!cubin.empty()) return write_cubin(*c, cubin, arch);
  if (arch != 0) return usage("--arch goes with --cubin");
  return run(*c, launches);
}
