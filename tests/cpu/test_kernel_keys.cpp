// SPDX-License-Identifier: Apache-2.0
// Kernel keys name cubins on disk and in memory: the same kernel must always get the same key,
// anything that changes the machine code must change it, and the digest must be a safe file name.
#include <doctest/doctest.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "runtime/compiler/embedded_sources.h"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/compiler/nvrtc.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/topk/topk_kernels.h"

using namespace kjit;

namespace {

RowwiseProblem f32_problem(std::int64_t cols, RowOp op = RowOp::kSoftmax) {
  return {op, DType::kF32, DType::kF32, 64, cols, 4};
}

KernelSpec warp_spec(std::int64_t cols, RowOp op = RowOp::kSoftmax) {
  return rowwise_kernel_spec(f32_problem(cols, op), {Algorithm::kWarp, 4, 128, 32, 1});
}

bool file_name_safe(const std::string& text) {
  if (text.empty() || text.size() > 128) return false;
  for (unsigned char c : text)
    if (!std::isalnum(c) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

TEST_CASE("a spec is a mechanical join of the config") {
  // The kernel and its header are named after the algorithm; the template arguments follow
  // (op, io types, cols) and the config keys in their order: pack, threads, group, cluster, staged.
  const KernelSpec spec = warp_spec(1024);
  CHECK(spec.header == "warp.cuh");
  CHECK(spec.name_expression == "kjit::warp<0, kjit::Io<float, float>, 1024, 4, 128, 32>");

  const KernelSpec regs = rowwise_kernel_spec(f32_problem(4096), {Algorithm::kBlockRegs, 4, 512, 512, 1});
  CHECK(regs.header == "block_regs.cuh");
  CHECK(regs.name_expression == "kjit::block_regs<0, kjit::Io<float, float>, 4096, 4, 512>");

  const RowwiseProblem half{RowOp::kLogSoftmax, DType::kF16, DType::kBF16, 8, 4097, 8};
  const KernelSpec smem = rowwise_kernel_spec(half, {Algorithm::kBlockSmem, 8, 512, 512, 1});
  CHECK(smem.header == "block_smem.cuh");
  CHECK(smem.name_expression == "kjit::block_smem<1, kjit::Io<kjit::f16, kjit::bf16>, 4097, 8, 512>");
  const KernelSpec cluster_smem = rowwise_kernel_spec(half, {Algorithm::kClusterSmem, 8, 512, 512, 4});
  CHECK(cluster_smem.header == "cluster_smem.cuh");
  CHECK(cluster_smem.name_expression ==
        "kjit::cluster_smem<1, kjit::Io<kjit::f16, kjit::bf16>, 4097, 8, 512, 4>");

  const KernelSpec cluster =
      rowwise_kernel_spec(f32_problem(50257, RowOp::kReduceScale), {Algorithm::kCluster, 4, 512, 512, 4});
  CHECK(cluster.header == "cluster.cuh");
  CHECK(cluster.name_expression == "kjit::cluster<2, kjit::Io<float, float>, 50257, 4, 512, 4>");

  const KernelSpec online =
      rowwise_kernel_spec(f32_problem(262144), {Algorithm::kBlockOnline, 4, 512, 512, 2});
  CHECK(online.header == "block_online.cuh");
  CHECK(online.name_expression == "kjit::block_online<0, kjit::Io<float, float>, 262144, 4, 512, 2>");

  const KernelSpec stream = rowwise_kernel_spec(f32_problem(4096), {Algorithm::kStream, 4, 256, 32, 1});
  CHECK(stream.header == "stream.cuh");
  CHECK(stream.name_expression == "kjit::stream<0, kjit::Io<float, float>, 4096, 4, 256, 32, 1>");

  const KernelSpec ring = rowwise_kernel_spec(f32_problem(262144), {Algorithm::kRing, 4, 512, 256, 16});
  CHECK(ring.header == "ring.cuh");
  CHECK(ring.name_expression == "kjit::ring<0, kjit::Io<float, float>, 262144, 512, 256, 16>");

  KernelConfig split{Algorithm::kBlockSplit, 4, 512, 512, 1};
  split.staged = 6;
  const KernelSpec staged = rowwise_kernel_spec(f32_problem(32000), split);
  CHECK(staged.header == "block_split.cuh");
  CHECK(staged.name_expression == "kjit::block_split<0, kjit::Io<float, float>, 32000, 4, 512, 6>");

  // A peeled config's Io says so; the others' names read as before.
  KernelConfig peeled{Algorithm::kBlockRegs, 8, 256, 256, 1};
  peeled.peel = true;
  const RowwiseProblem odd{RowOp::kSoftmax, DType::kBF16, DType::kF32, 8, 4097, 1};
  CHECK(rowwise_kernel_spec(odd, peeled).name_expression ==
        "kjit::block_regs<0, kjit::Io<kjit::bf16, float, true>, 4097, 8, 256>");

  // Every header a spec names is one of the embedded sources.
  std::set<std::string> embedded;
  for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it)
    embedded.insert(std::string(it->name));
  for (const auto& s : {spec, regs, smem, cluster_smem, cluster, online, stream, ring, staged})
    CHECK(embedded.count(s.header) == 1);
}

TEST_CASE("a top-K spec names its algorithm's kernel, the config keys in their order") {
  const TopkProblem p{DType::kBF16, DType::kI32, 8, 128256, 50, 8};
  const KernelSpec stream = topk_kernel_spec(p, {8, 512, 4, 8, TopkAlgorithm::kStream});
  CHECK(stream.header == "topk_stream.cuh");
  CHECK(stream.name_expression == "kjit::topk_stream<kjit::bf16, int, 128256, 64, 8, 512, 4, 8>");
  const KernelSpec resident = topk_kernel_spec(p, {8, 1024, 2, 8, TopkAlgorithm::kResident});
  CHECK(resident.header == "topk_resident.cuh");
  CHECK(resident.name_expression == "kjit::topk_resident<kjit::bf16, int, 128256, 64, 8, 1024, 2, 8>");
  std::set<std::string> embedded;
  for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it)
    embedded.insert(std::string(it->name));
  CHECK(embedded.count(stream.header) == 1);
  CHECK(embedded.count(resident.header) == 1);
}

TEST_CASE("a spec needs a concrete algorithm") {
  try {
    rowwise_kernel_spec(f32_problem(1000), KernelConfig{});
    FAIL("rowwise_kernel_spec accepted algorithm auto");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorInvalidConfig);
  }
}

TEST_CASE("the key holds everything that changes the cubin") {
  const std::string text = kernel_key_text(warp_spec(1000), 90);
  CHECK(text.find(warp_spec(1000).name_expression) != std::string::npos);
  CHECK(text.find("sm_90") != std::string::npos);
  CHECK(text.find(nvrtc_version()) != std::string::npos);
  CHECK(text.find(embedded_sources_digest()) != std::string::npos);
  CHECK(text.find(kjit_version()) != std::string::npos);
  for (const std::string& option : fixed_nvrtc_options()) {
    CAPTURE(option);
    CHECK(text.find(option) != std::string::npos);
  }
}

TEST_CASE("the key changes with arch, name expression, header and options") {
  const KernelSpec spec = warp_spec(1000);
  const std::string text = kernel_key_text(spec, 90);
  const std::string digest = kernel_key_digest(text);

  CHECK(kernel_key_text(spec, 80) != text);
  CHECK(kernel_key_digest(kernel_key_text(spec, 80)) != digest);
  CHECK(kernel_key_digest(kernel_key_text(warp_spec(1001), 90)) != digest);
  CHECK(kernel_key_digest(kernel_key_text(warp_spec(1000, RowOp::kLogSoftmax), 90)) != digest);

  KernelSpec other_header = spec;
  other_header.header = "block_online.cuh";
  CHECK(kernel_key_digest(kernel_key_text(other_header, 90)) != digest);

  // Options only enter through the key text; a text that differs in one option must digest apart.
  const std::string option = fixed_nvrtc_options().front();
  std::string edited = text;
  const auto at = edited.find(option);
  REQUIRE(at != std::string::npos);
  edited.replace(at, option.size(), option + "x");
  CHECK(kernel_key_digest(edited) != digest);
}

TEST_CASE("digests are file-name safe and distinct") {
  std::set<std::string> digests;
  std::size_t specs = 0;
  for (std::int64_t cols : {1, 2, 3, 31, 32, 33, 1000, 1024, 4097, 50257}) {
    for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale}) {
      const RowwiseProblem problem = f32_problem(cols, op);
      for (const KernelConfig& config :
           {KernelConfig{Algorithm::kWarp, 4, 128, 32, 1}, KernelConfig{Algorithm::kBlockSmem, 4, 256, 256, 1},
            KernelConfig{Algorithm::kBlockOnline, 4, 1024, 1024, 1},
            KernelConfig{Algorithm::kCluster, 4, 256, 256, 2},
            KernelConfig{Algorithm::kClusterSmem, 4, 256, 256, 2}}) {
        for (int arch : {80, 90}) {
          const std::string digest =
              kernel_key_digest(kernel_key_text(rowwise_kernel_spec(problem, config), arch));
          CAPTURE(digest);
          CHECK(file_name_safe(digest));
          digests.insert(digest);
          ++specs;
        }
      }
    }
  }
  CHECK(digests.size() == specs);
  CHECK(file_name_safe(kernel_key_digest("")));
  CHECK(file_name_safe(kernel_key_digest("../../etc/passwd \n\t*?")));
  CHECK(kernel_key_digest("a") != kernel_key_digest("b"));
}

TEST_CASE("a compiled kernel carries the key of its spec") {
  const KernelSpec spec = warp_spec(33);
  const CompiledKernel kernel = compile_kernel(spec, 80);
  CHECK(kernel.arch == 80);
  CHECK(kernel.spec.name_expression == spec.name_expression);
  CHECK(kernel.key_text == kernel_key_text(spec, 80));
  CHECK(kernel.key_digest == kernel_key_digest(kernel.key_text));
  CHECK_FALSE(kernel.cubin.empty());
}
