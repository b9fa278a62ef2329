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

namespace {

struct RowCase {
  RowOp op;
  DType dtype;
  std::int64_t rows, cols;
  KernelConfig config;  // zero fields are filled in as run_with_config does
  // Views off the vector alignment (BatchLayout's fields; 0: dense, at the allocation's start).
  std::int64_t in_stride = 0, out_stride = 0, in_offset = 0, out_offset = 0;
};

struct TopkCase {
  DType dtype;
  std::int64_t rows, cols;
  std::int32_t k;
  TopkConfig config;
  std::int64_t row_stride = 0;  ///< 0: cols
  std::int64_t in_offset = 0;   ///< elements before the first row
};

struct AttentionRun {
  AttentionCase shape;
  AttentionConfig config;
};

struct Case {
  const char* name;
  const char* why;  // the path it covers
  std::optional<RowCase> row;
  std::optional<TopkCase> topk;
  std::optional<AttentionRun> attention;
};

KernelConfig ring(int pack, int threads, int group, int cluster) {
  return {Algorithm::kRing, pack, threads, group, cluster};
}
KernelConfig peeled_ring(int pack, int threads, int group, int cluster) {
  KernelConfig config = ring(pack, threads, group, cluster);
  config.peel = true;
  return config;
}
KernelConfig forced(Algorithm algorithm, int cluster = 0) { return {algorithm, 0, 0, 0, cluster}; }
KernelConfig peeled(Algorithm algorithm, int cluster = 0) {
  KernelConfig config{algorithm};
  config.cluster = cluster;
  config.peel = true;
  return config;
}

// Swin windows: 49 tokens (strips and keys padded inside the kernel), a bias and a mask with
// fully masked rows, more problems than the grid's groups so that stages are refilled.
AttentionRun windows(AttentionConfig config) {
  AttentionCase c;
  c.batch = 300;
  c.heads = 3;
  c.m = c.n = 49;
  c.d = c.dv = 32;
  c.bias = c.mask = true;
  c.mask_dtype = DType::kBF16;
  c.mask_windows = 4;
  c.masked_fraction = 0.3;
  c.masked_rows = 0.1;
  return {c, config};
}

// 197 tokens over key blocks (online softmax), causal, bf16.
AttentionRun long_causal(AttentionConfig config) {
  AttentionCase c;
  c.dtype = DType::kBF16;
  c.batch = 40;
  c.heads = 4;
  c.m = c.n = 197;
  c.d = c.dv = 64;
  c.causal = true;
  return {c, config};
}

// Each ring case passes more chunks through a block than its ring has slots (H100: 7 clusters of
// 16, 16 of 8, 132 blocks of 1 share the rows), so that slots are reused, in as few bytes as its
// layout allows: racecheck's time grows with the shared-memory traffic. Chunks of one 16-byte
// vector a consumer (4 KB for 256, 8 KB for 512) fill a ring with 12 slots, so 13 rows a cluster;
// the log-softmax bulk stores need slices of 28 KB, and two chunks a slice more than 32 KB.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"ring-bf16-2g-c16", "two groups, clusters of 16, bulk stores, slots alternating groups",
       RowCase{RowOp::kSoftmax, DType::kBF16, 91, 32768, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c16-log", "log-softmax's bulk stores of rows held as loaded words (28 KB slices)",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 63, 229376, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c16-regs", "two groups storing from registers, twelve slots alternating groups",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 91, 32768, ring(8, 512, 256, 16)}, {}},
      {"ring-bf16-2g-c8", "two groups, clusters of 8",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 16384, ring(8, 512, 256, 8)}, {}},
      {"ring-bf16-1g-c8", "one group of 512, register stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 32768, ring(8, 512, 512, 8)}, {}},
      {"ring-f32-2g-c16", "fp32, two groups, clusters of 16, slices of two chunks",
       RowCase{RowOp::kSoftmax, DType::kF32, 42, 131200, ring(4, 512, 256, 16)}, {}},
      {"ring-f32-1g-c8", "fp32, one group, clusters of 8, reduce_scale's scales",
       RowCase{RowOp::kReduceScale, DType::kF32, 208, 16384, ring(4, 512, 512, 8)}, {}},
      {"ring-f32-2g-c1", "fp32, two groups, a block a row (no cluster instructions)",
       RowCase{RowOp::kSoftmax, DType::kF32, 1716, 1024, ring(4, 512, 256, 1)}, {}},
      {"cluster", "slices in registers over clusters of 8",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 131072, forced(Algorithm::kCluster, 8)}, {}},
      {"cluster-smem", "slices in shared memory over clusters of 4",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 16, 131072, forced(Algorithm::kClusterSmem, 4)}, {}},
      {"block-split", "staged packs copied asynchronously",
       RowCase{RowOp::kSoftmax, DType::kF32, 64, 32000, forced(Algorithm::kBlockSplit)}, {}},
      {"stream-rows", "row tiles streamed through shared memory, several rows a block",
       RowCase{RowOp::kSoftmax, DType::kBF16, 512, 1000, forced(Algorithm::kStream, 1)}, {}},
      {"stream-cluster", "row slices streamed over clusters of 4",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 65536, forced(Algorithm::kStream, 4)}, {}},
      {"block-smem", "a block a row, the row in shared memory",
       RowCase{RowOp::kSoftmax, DType::kF32, 32, 12345, forced(Algorithm::kBlockSmem)}, {}},
      {"block-online", "online (max, sum) over clusters of 2, the row read twice",
       RowCase{RowOp::kSoftmax, DType::kF32, 16, 65536, forced(Algorithm::kBlockOnline, 2)}, {}},
      {"warp", "a warp a row",
       RowCase{RowOp::kSoftmax, DType::kF32, 256, 1000, forced(Algorithm::kWarp)}, {}},
      {"block-regs", "a block a row in registers",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 64, 4097, forced(Algorithm::kBlockRegs)}, {}},
      {"warp-peeled", "a warp a row, each dense row of an odd width on its own vector grid",
       RowCase{RowOp::kSoftmax, DType::kBF16, 256, 49, peeled(Algorithm::kWarp)}, {}},
      {"block-regs-peeled", "rows on their own grids, the output's shift apart: realigned stores",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 64, 4097, peeled(Algorithm::kBlockRegs), 4099, 4105, 1, 3}, {}},
      {"block-online-peeled", "slices of a cluster on their own grids, odd strides apart: realigned stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 24, 20001, peeled(Algorithm::kBlockOnline, 4), 20003, 20009, 1, 3},
       {}},
      {"cluster-peeled", "slices of a cluster in registers on their own grids, odd strides apart: realigned stores",
       RowCase{RowOp::kSoftmax, DType::kF32, 24, 40001, peeled(Algorithm::kCluster, 4), 40003, 40009, 1, 3}, {}},
      {"cluster-smem-peeled", "slices in shared memory on their own grids, outputs read back on theirs",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 24, 40001, peeled(Algorithm::kClusterSmem, 4), 40003, 40009, 1, 3},
       {}},
      {"ring-peeled", "fp32 rows of one lead on both sides: the body by bulk copies, head and tail by elements",
       RowCase{RowOp::kSoftmax, DType::kF32, 208, 16385, peeled_ring(4, 512, 256, 4), 16389, 16393, 1, 1}, {}},
      {"ring-peeled-apart", "16-bit rows whose outputs lie off their inputs' grid: element stores",
       RowCase{RowOp::kSoftmax, DType::kBF16, 208, 32769, peeled_ring(8, 512, 512, 8), 32771, 32777, 1, 3}, {}},
      {"block-split-peeled", "staged packs of odd-width rows: whole vectors copied asynchronously",
       RowCase{RowOp::kSoftmax, DType::kF32, 64, 32001, peeled(Algorithm::kBlockSplit)}, {}},
      {"flat-tile-f16", "dense rows as spans in 16-byte units, the last tile partial, its end peeled",
       RowCase{RowOp::kSoftmax, DType::kF16, 1001, 49, KernelConfig{Algorithm::kFlatTile, 1, 256, 16, 1}}, {}},
      {"flat-tile-f32-scales", "the same over fp32 rows of 77, reduce_scale's scales",
       RowCase{RowOp::kReduceScale, DType::kF32, 333, 77, KernelConfig{Algorithm::kFlatTile, 1, 128, 16, 1}}, {}},
      {"flat-tile-gaps", "rows of narrow gaps as spans, the gaps loaded along and never stored, offsets apart",
       RowCase{RowOp::kLogSoftmax, DType::kBF16, 1001, 49, KernelConfig{Algorithm::kFlatTile, 1, 256, 16, 1}, 53, 51,
               1, 3},
       {}},
      {"topk-stream", "softmax + top-K, tiles streamed with a rising threshold",
       {}, TopkCase{DType::kF32, 4, 128256, 50, TopkConfig{0, 0, 0, 0, TopkAlgorithm::kStream}}},
      {"topk-stream-shifted", "softmax + top-K over bf16 rows of an odd stride, read from their 16-byte boundaries",
       {}, TopkCase{DType::kBF16, 5, 50257, 300, TopkConfig{0, 0, 0, 3, TopkAlgorithm::kStream}, 50263, 3}},
      {"topk-resident", "softmax + top-K, the row resident over a cluster of 2",
       {}, TopkCase{DType::kBF16, 8, 32000, 64, TopkConfig{0, 0, 0, 2, TopkAlgorithm::kResident}}},
      {"attention-2stage", "attention, problem groups of 4 warps cycling two cp.async stages",
       {}, {}, windows({4, 2, 2})},
      {"attention-1stage", "attention, eight one-warp groups of one stage each",
       {}, {}, windows({1, 8, 1})},
      {"attention-online", "attention over key blocks with online softmax, causal",
       {}, {}, long_causal({4, 1, 2})},
  };
  return all;
}

const Case* find_case(const std::string& name) {
  for (const Case& c : cases())
    if (name == c.name) return &c;
  return nullptr;
}

std::string describe(const Case& c) {
  std::string text = std::string(c.name) + ": ";
  if (c.row) {
    const RowCase& r = *c.row;
    text += std::string(to_string(r.op)) + " " + to_string(r.dtype) + " " + std::to_string(r.rows) + "x" +
            std::to_string(r.cols) + ", " + r.config.to_string();
    if (r.in_stride != 0 || r.in_offset != 0 || r.out_offset != 0)
      text += " (" + kjit::test::describe(BatchLayout{r.dtype, r.dtype, r.rows, r.cols, r.in_stride, r.out_stride,
                                                      r.in_offset, r.out_offset}) + ")";
  } else if (c.attention) {
    text += "attention " + kjit::test::describe(c.attention->shape) + ", " + c.attention->config.to_string();
  } else {
    const TopkCase& t = *c.topk;
    text += std::string("softmax_topk ") + to_string(t.dtype) + " " + std::to_string(t.rows) + "x" +
            std::to_string(t.cols) + " k=" + std::to_string(t.k) + ", " + t.config.to_string();
  }
  return text + " (" + c.why + ")";
}

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
