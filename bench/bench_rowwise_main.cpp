// SPDX-License-Identifier: Apache-2.0
// kjit_bench_rowwise [--json FILE] [--min-elements N]: times every benchmark shape of softmax,
// log_softmax and reduce_scale in f32 and bf16 (those of at least N elements) and prints a
// markdown table (and JSON for the comparison script). Set KJIT_TUNE=off to time the heuristics'
// picks, or leave it at cached to time the tuning records' winners.
// kjit_bench_rowwise --host: host-side costs (cold start from the disk cache, hot path).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/host_overhead.h"
#include "bench/rowwise_bench.h"
#include "kjit/error.hpp"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"

namespace {

std::vector<kjit::bench::BenchShape> all_shapes() {
  using kjit::DType;
  using kjit::RowOp;
  std::vector<kjit::bench::BenchShape> shapes;
  for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax})
    for (DType dtype : {DType::kF32, DType::kBF16})
      for (const auto& s : kjit::bench::standard_shapes(op, dtype)) shapes.push_back(s);
  for (DType dtype : {DType::kF32, DType::kBF16})
    for (std::int64_t rows_cols : {65536 * 1024LL, 442368 * 128LL}) {
      const std::int64_t cols = rows_cols == 65536 * 1024LL ? 1024 : 128;
      shapes.push_back({RowOp::kReduceScale, dtype, dtype, rows_cols / cols, cols});
    }
  return shapes;
}

}  // namespace

int host_main() {
  const auto r = kjit::bench::measure_host_overhead(64, 1000);
  std::printf("first call, cubin on disk, new runtime: %.2f ms\n", r.first_call_ms);
  std::printf("hot path: kjit_softmax %.2f us/call, bare %s %.2f us/call, overhead %.2f us\n",
              r.kjit_call_us, r.dependent_launch ? "cuLaunchKernelEx (dependent launch)" : "cuLaunchKernel",
              r.bare_launch_us, r.kjit_call_us - r.bare_launch_us);
  // A ring launch also takes its row-claim counter.
  const auto ring = kjit::bench::measure_host_overhead(16, 262144);
  std::printf("hot path, fp32 16x262144 (%s): kjit_softmax %.2f us/call, bare %.2f us/call, overhead %.2f us\n",
              ring.config.c_str(), ring.kjit_call_us, ring.bare_launch_us, ring.kjit_call_us - ring.bare_launch_us);
  return 0;
}

struct BenchFlags {
  const char* json_path = nullptr;
  long long min_elements = 0;
  bool host = false;
  bool valid = true;
};

BenchFlags parse_flags(int argc, char** argv) {
  BenchFlags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--host") flags.host = true;
    else if (arg == "--json" && has_value) flags.json_path = argv[++i];
    else if (arg == "--min-elements" && has_value) flags.min_elements = std::atoll(argv[++i]);
    else flags.valid = false;
  }
  return flags;
}

int main(int argc, char** argv) {
  const BenchFlags flags = parse_flags(argc, argv);
  if (!flags.valid) {
    std::fprintf(stderr, "usage: kjit_bench_rowwise [--json FILE] [--min-elements N] | --host\n");
    return 2;
  }
  if (flags.host) {
    try {
      return host_main();
    } catch (const kjit::Error& e) {
      std::fprintf(stderr, "kjit_bench_rowwise: %s\n", e.what());
      return 1;
    }
  }
  const char* json_path = flags.json_path;
  try {
    kjit::Runtime runtime;
    kjit::current_or_primary_context();  // streams need a current context
    kjit::Stream stream = kjit::create_stream();
    kjit::bench::RowwiseBench bench(runtime, stream.get());
    std::printf("copy bandwidth: %.0f GB/s\n\n", bench.copy_bandwidth() / 1e9);
    std::printf("| op | dtype | shape | config | us | GB/s | %% copy | same-size copy %% | %% of same-size copy |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    nlohmann::json out = {{"copy_gb_per_s", bench.copy_bandwidth() / 1e9}, {"results", nlohmann::json::array()}};
    for (const auto& shape : all_shapes()) {
      if (shape.rows * shape.cols < flags.min_elements) continue;
      const auto r = bench.run(shape);
      std::printf("| %s | %s | %s | %s | %.2f | %.0f | %.1f | %.1f | %.1f |\n", kjit::to_string(shape.op),
                  kjit::to_string(shape.in_dtype), kjit::bench::shape_name(shape).c_str(),
                  r.kernel.config.to_string().c_str(), r.timing.median_us, r.gb_per_s,
                  r.percent_of_copy, r.same_size_copy_percent, r.percent_of_same_size_copy);
      std::fflush(stdout);
      out["results"].push_back({{"op", kjit::to_string(shape.op)},
                                {"dtype", kjit::to_string(shape.in_dtype)},
                                {"rows", shape.rows}, {"cols", shape.cols},
                                {"config", r.kernel.config.to_string()},
                                {"median_us", r.timing.median_us}, {"p20_us", r.timing.p20_us},
                                {"p80_us", r.timing.p80_us}, {"gb_per_s", r.gb_per_s},
                                {"percent_of_copy", r.percent_of_copy},
                                {"same_size_copy_percent", r.same_size_copy_percent},
                                {"percent_of_same_size_copy", r.percent_of_same_size_copy}});
    }
    if (json_path) std::ofstream(json_path) << out.dump(2) << "\n";
  } catch (const kjit::Error& e) {
    std::fprintf(stderr, "kjit_bench_rowwise: %s\n", e.what());
    return 1;
  }
  return 0;
}
