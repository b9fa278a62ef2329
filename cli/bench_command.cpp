// SPDX-License-Identifier: Apache-2.0
// `kjit bench --spec FILE`: times the calls of a spec file on this GPU, as the benchmark does.
#include <cstdio>
#include <memory>
#include <string>

#include "bench/rowwise_bench.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "cli/spec_file.h"
#include "kjit/error.hpp"
#include "runtime/driver/handles.h"

namespace kjit::cli {
namespace {

struct BenchFlags {
  std::string spec;
  bool json = false;
};

void run_bench(const BenchFlags& flags) {
  const std::vector<SpecCall> calls = load_spec_file(flags.spec);
  if (!gpu_present()) throw Error(Status::kErrorNoDriver, "kjit bench times kernels on a GPU; there is none here");
  Runtime runtime;
  current_or_primary_context();  // streams need a current context
  Stream stream = create_stream();
  bench::RowwiseBench bench(runtime, stream.get());
  Table table({"op", "dtype", "shape", "config", "us", "p20", "p80", "GB/s", "%copy"});
  std::string json = "[";
  std::size_t skipped = 0;
  for (const SpecCall& call : calls) {
    const std::string op = call["op"].get<std::string>();
    if (op == "softmax_topk") {  // bench/compare_topk.py times softmax + top-K beside torch
      ++skipped;
      continue;
    }
    const DType in = parse_dtype(call.value("dtype", "f32"));
    const DType out = parse_dtype(call.value("out_dtype", to_string(in)));
    const std::int64_t rows = call.value("rows", 1), cols = call["cols"].get<std::int64_t>();
    const bench::BenchResult r = bench.run({parse_row_op(op), in, out, rows, cols});
    table.add({op, to_string(in), bench::shape_name(r.shape), r.kernel.config.to_string(),
               format("%.2f", r.timing.median_us), format("%.2f", r.timing.p20_us),
               format("%.2f", r.timing.p80_us), format("%.0f", r.gb_per_s),
               format("%.1f", r.percent_of_copy)});
    json += format("%s{\"op\":\"%s\",\"dtype\":\"%s\",\"rows\":%lld,\"cols\":%lld,\"median_us\":%.3f,"
                   "\"gb_per_s\":%.1f,\"percent_of_copy\":%.2f}",
                   json.size() > 1 ? "," : "", op.c_str(), to_string(in),
                   static_cast<long long>(rows), static_cast<long long>(cols),
                   r.timing.median_us, r.gb_per_s, r.percent_of_copy);
  }
  if (flags.json) {
    std::printf("%s]\n", json.c_str());
    return;
  }
  std::printf("copy bandwidth: %.0f GB/s (read + write)\n\n", bench.copy_bandwidth() / 1e9);
  table.print();
  if (skipped > 0)
    std::printf("\n%zu softmax_topk calls not timed here: bench/compare_topk.py times them\n", skipped);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  auto* command = app.add_subcommand("bench", "Time the calls of a spec file on this GPU");
  command->add_option("--spec", flags->spec, "JSON shape list, as for precompile")->required();
  command->add_flag("--json", flags->json, "print JSON");
  command->callback([flags] { run_bench(*flags); });
}

}  // namespace kjit::cli
