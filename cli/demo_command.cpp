// SPDX-License-Identifier: Apache-2.0
// `kjit demo`: the main job. Compiles the kernels the heuristics pick for the benchmark shapes
// for one arch and shows what was built; on a GPU it also runs them and reports GB/s.
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/driver/nominal_device.h"
#include "bench/rowwise_bench.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/handles.h"
#include "kjit/error.hpp"
#include "runtime/op_tools.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit::cli {
namespace {

std::vector<bench::BenchShape> demo_shapes() {
  std::vector<bench::BenchShape> shapes = bench::standard_shapes(RowOp::kSoftmax, DType::kF32);
  for (const auto& s : bench::standard_shapes(RowOp::kSoftmax, DType::kBF16)) shapes.push_back(s);
  shapes.push_back({RowOp::kLogSoftmax, DType::kF32, DType::kF32, 4096, 50257});
  shapes.push_back({RowOp::kReduceScale, DType::kF32, DType::kF32, 65536, 1024});
  shapes.push_back({RowOp::kReduceScale, DType::kBF16, DType::kBF16, 442368, 128});
  return shapes;
}

std::vector<std::string> describe(const bench::BenchShape& s, const std::string& config,
                                  const ResourceUsage& usage, int dynamic_smem, double compile_ms) {
  return {to_string(s.op), to_string(s.in_dtype), bench::shape_name(s), config,
          std::to_string(usage.registers),
          std::to_string(usage.static_smem + dynamic_smem),
          std::to_string(usage.spill_stores + usage.spill_loads), format("%.0f", compile_ms)};
}

void compile_only(int arch) {
  const DeviceProps device = nominal_device(arch);
  std::printf("No GPU run: compiling for sm_%d (%s).\n\n", arch, device.name.c_str());
  Table table({"op", "dtype", "shape", "config", "regs", "smem", "spills", "compile_ms"});
  for (const auto& s : demo_shapes()) {
    const nlohmann::json call = {{"op", to_string(s.op)}, {"dtype", to_string(s.in_dtype)},
                                 {"out_dtype", to_string(s.out_dtype)}, {"rows", s.rows}, {"cols", s.cols}};
    const PlannedKernel plan = op_tools(to_string(s.op)).plan(call, device, "auto");
    const CompiledKernel k = compile_kernel(plan.spec, arch);
    table.add(describe(s, plan.config, k.usage, plan.shape.dynamic_smem, k.compile_ms));
  }
  table.print();
}

void compile_and_run() {
  Runtime runtime;
  Stream stream = create_stream();
  bench::RowwiseBench bench(runtime, stream.get());
  std::printf("copy bandwidth: %.0f GB/s (read + write)\n\n", bench.copy_bandwidth() / 1e9);
  Table table({"op", "dtype", "shape", "config", "regs", "smem", "spills", "compile_ms", "us",
               "GB/s", "%copy"});
  for (const auto& s : demo_shapes()) {
    const bench::BenchResult r = bench.run(s);
    ResourceUsage usage;
    usage.registers = r.kernel.registers;
    usage.static_smem = r.kernel.static_smem;
    usage.spill_stores = r.kernel.spill_bytes;
    auto row = describe(s, r.kernel.config.to_string(), usage, r.kernel.dynamic_smem, r.kernel.compile_ms);
    row.push_back(format("%.2f", r.timing.median_us));
    row.push_back(format("%.0f", r.gb_per_s));
    row.push_back(format("%.1f", r.percent_of_copy));
    table.add(row);
  }
  table.print();
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto arch = std::make_shared<std::string>();
  auto* command = app.add_subcommand(
      "demo", "Compile (and on a GPU, run and time) the heuristic kernels for the benchmark shapes");
  command->add_option("--arch", *arch, "target without a GPU, e.g. sm_90 (default: this GPU, else sm_90)");
  command->callback([arch] {
    bool on_gpu = false;
    const int wanted = arch->empty() ? 0 : parse_arch(*arch, "--arch");
    try {
      target_device(wanted, &on_gpu);
    } catch (const Error&) {
      on_gpu = false;
    }
    if (on_gpu) compile_and_run();
    else compile_only(wanted == 0 ? 90 : wanted);
  });
}

}  // namespace kjit::cli
