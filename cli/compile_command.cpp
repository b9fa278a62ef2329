// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit::cli {
namespace {

struct CompileFlags {
  std::string op, dtype = "f32", out_dtype, arch, algorithm = "auto";
  long long cols = 0, rows = 1;
  bool json = false;
};

void print_report(const CompiledKernel& k, const KernelConfig& config, const LaunchShape& shape,
                  bool json) {
  const int spills = k.usage.spill_stores + k.usage.spill_loads;
  if (json) {
    nlohmann::ordered_json out = {
        {"key", k.key_digest}, {"kernel", k.spec.name_expression},
        {"config", nlohmann::json::parse(config.to_json())}, {"arch", "sm_" + std::to_string(k.arch)},
        {"registers", k.usage.registers}, {"static_smem", k.usage.static_smem},
        {"dynamic_smem", shape.dynamic_smem}, {"spill_bytes", spills},
        {"cubin_bytes", k.cubin.size()}, {"compile_ms", k.compile_ms}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("key:        %s\n", k.key_digest.c_str());
  std::printf("kernel:     %s\n", k.spec.name_expression.c_str());
  std::printf("config:     %s\n", config.to_string().c_str());
  std::printf("arch:       sm_%d\n", k.arch);
  std::printf("registers:  %d\n", k.usage.registers);
  std::printf("smem:       %d B static + %d B dynamic\n", k.usage.static_smem, shape.dynamic_smem);
  std::printf("spills:     %d B\n", spills);
  std::printf("cubin:      %zu B\n", k.cubin.size());
  std::printf("compile:    %.1f ms\n", k.compile_ms);
}

void run_compile(const CompileFlags& flags) {
  const DType in = parse_dtype(flags.dtype);
  const DType out = flags.out_dtype.empty() ? in : parse_dtype(flags.out_dtype);
  const RowwiseProblem problem =
      contiguous_problem(parse_row_op(flags.op), in, out, flags.rows, flags.cols);
  bool on_gpu = false;
  const DeviceProps device =
      target_device(flags.arch.empty() ? 0 : parse_arch(flags.arch, "--arch"), &on_gpu);
  RowwiseProblem planned = problem;
  planned.rows = std::max<std::int64_t>(1, problem.rows);
  const KernelConfig config = complete_rowwise_config(
      planned, device, KernelConfig{parse_algorithm(flags.algorithm)});
  if (std::string why = why_not_rowwise(planned, device, config); !why.empty())
    throw kjit::Error(Status::kErrorInvalidArgument, "--algorithm: " + why);
  const CompiledKernel kernel = compile_kernel(rowwise_kernel_spec(planned, config), device.arch);
  print_report(kernel, config, rowwise_launch_shape(planned, config, device.sm_count), flags.json);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto flags = std::make_shared<CompileFlags>();
  auto* command = app.add_subcommand(
      "compile", "Compile the kernel the heuristic picks for a shape (no GPU needed with --arch)");
  command->add_option("--op", flags->op, "softmax, log_softmax or reduce_scale")->required();
  command->add_option("--dtype", flags->dtype, "input dtype: f32, f16 or bf16");
  command->add_option("--out-dtype", flags->out_dtype, "output dtype (default: --dtype)");
  command->add_option("--cols", flags->cols, "columns per row")->required();
  command->add_option("--rows", flags->rows, "rows (the heuristic depends on it)");
  command->add_option("--arch", flags->arch, "target, e.g. sm_90 (default: this GPU)");
  command->add_option("--algorithm", flags->algorithm,
                      "auto, warp, block_regs, block_smem, block_online, cluster, cluster_smem, stream, ring or block_split");
  command->add_flag("--json", flags->json, "print JSON");
  command->callback([flags] { run_compile(*flags); });
}

}  // namespace kjit::cli
