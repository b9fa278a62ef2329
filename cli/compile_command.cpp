// SPDX-License-Identifier: Apache-2.0
// `kjit compile`: the kernel any call gets, compiled for an arch (no GPU needed with --arch).
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/call_flags.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/op_tools.h"

namespace kjit::cli {
namespace {

struct CompileFlags {
  CallFlags call;
  std::string arch, algorithm = "auto", cubin_path;
  bool json = false;
};

void print_report(const CompiledKernel& k, const PlannedKernel& plan, bool json) {
  const int spills = k.usage.spill_stores + k.usage.spill_loads;
  if (json) {
    nlohmann::ordered_json out = {
        {"key", k.key_digest}, {"kernel", k.spec.name_expression},
        {"config", nlohmann::json::parse(plan.config_json)}, {"planned", plan.planned},
        {"arch", "sm_" + std::to_string(k.arch)}, {"registers", k.usage.registers},
        {"static_smem", k.usage.static_smem}, {"dynamic_smem", plan.shape.dynamic_smem},
        {"spill_bytes", spills}, {"cubin_bytes", k.cubin.size()}, {"compile_ms", k.compile_ms}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("key:        %s\n", k.key_digest.c_str());
  std::printf("kernel:     %s\n", k.spec.name_expression.c_str());
  std::printf("config:     %s\n", plan.config.c_str());
  std::printf("arch:       sm_%d\n", k.arch);
  std::printf("registers:  %d\n", k.usage.registers);
  std::printf("smem:       %d B static + %d B dynamic\n", k.usage.static_smem, plan.shape.dynamic_smem);
  std::printf("spills:     %d B\n", spills);
  std::printf("cubin:      %zu B\n", k.cubin.size());
  std::printf("compile:    %.1f ms\n", k.compile_ms);
}

/// The cubin as compiled, for cuobjdump or nvdisasm (a sanitizer's offsets name its instructions).
void write_cubin(const CompiledKernel& k, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw Error(Status::kErrorInvalidArgument, "--cubin: cannot write '" + path + "'");
  const bool written = std::fwrite(k.cubin.data(), 1, k.cubin.size(), file) == k.cubin.size();
  if (std::fclose(file) != 0 || !written)
    throw Error(Status::kErrorInvalidArgument, "--cubin: writing '" + path + "' failed");
}

void run_compile(const CompileFlags& flags) {
  const nlohmann::ordered_json call = call_of(flags.call);
  bool on_gpu = false;
  const DeviceProps device =
      target_device(flags.arch.empty() ? 0 : parse_arch(flags.arch, "--arch"), &on_gpu);
  const PlannedKernel plan = op_tools(call["op"].get<std::string>()).plan(call, device, flags.algorithm);
  const CompiledKernel kernel = compile_kernel(plan.spec, device.arch);
  if (!flags.cubin_path.empty()) write_cubin(kernel, flags.cubin_path);
  print_report(kernel, plan, flags.json);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto flags = std::make_shared<CompileFlags>();
  auto* command = app.add_subcommand(
      "compile", "Compile the kernel the heuristic picks for a call (no GPU needed with --arch)");
  add_call_options(*command, flags->call);
  command->add_option("--arch", flags->arch, "target, e.g. sm_90 (default: this GPU)");
  command->add_option("--algorithm", flags->algorithm,
                      "auto, or an algorithm of the op (softmax: warp, block_regs, block_smem, "
                      "block_online, cluster, cluster_smem, stream, ring, block_split, flat_tile; "
                      "softmax_topk: stream, resident; attention: tile)");
  command->add_option("--cubin", flags->cubin_path, "also write the cubin to this file (cuobjdump -sass reads it)");
  command->add_flag("--json", flags->json, "print JSON");
  command->callback([flags] { run_compile(*flags); });
}

}  // namespace kjit::cli
