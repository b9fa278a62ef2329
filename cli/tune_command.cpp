// SPDX-License-Identifier: Apache-2.0
// `kjit tune`: tunes one shape on this GPU now and prints every candidate, fastest first.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "autotune/topk_tuner.h"
#include "autotune/tune_records.h"
#include "autotune/tuner.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/driver/handles.h"

namespace kjit::cli {
namespace {

struct TuneFlags {
  std::string op, dtype = "f32", out_dtype, index_dtype = "i64";
  long long rows = 1, cols = 0;
  int k = 0;
  bool json = false;
  bool save = false;
  bool full = false;
  std::string cache_dir;
};

std::string shown_status(const CandidateResult& c) {
  return c.status.substr(0, 80) + (c.reused ? " (earlier run)" : "");
}
std::string shown_status(const TopkCandidateResult& c) { return c.status.substr(0, 80); }

/// Every candidate, fastest first and failed ones last, the winner marked * and the heuristic's
/// pick h; then the winner beside the heuristic. `bytes` moved per call, for GB/s.
template <typename Report>
void print_candidates(const Report& report, double bytes) {
  using Result = typename decltype(report.candidates)::value_type;
  std::vector<const Result*> order;
  for (const auto& c : report.candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    const bool a_ok = a->status == "ok", b_ok = b->status == "ok";
    if (a_ok != b_ok) return a_ok;
    return a_ok && a->timing.median_us < b->timing.median_us;
  });
  Table table({"", "config", "median_us", "p20_us", "p80_us", "GB/s", "status"});
  for (const auto* c : order) {
    std::string mark = c->config == report.winner ? "*" : "";
    if (c->config == report.heuristic) mark += "h";
    const bool ok = c->status == "ok";
    table.add({mark, c->config.to_string(), ok ? format("%.2f", c->timing.median_us) : "-",
               ok ? format("%.2f", c->timing.p20_us) : "-", ok ? format("%.2f", c->timing.p80_us) : "-",
               ok ? format("%.0f", bytes / (c->timing.median_us * 1e3)) : "-", shown_status(*c)});
  }
  table.print();
  const auto* heuristic = report.find(report.heuristic);
  const auto* winner = report.find(report.winner);
  if (heuristic && winner && heuristic->status == "ok")
    std::printf("\n* winner %.2f us; h heuristic %.2f us (%.2fx)\n", winner->timing.median_us,
                heuristic->timing.median_us, heuristic->timing.median_us / winner->timing.median_us);
}

void print_table(const TuneReport& report) {
  std::printf("%s %s->%s %lldx%lld on %s: %zu candidates in %.2f s (setup %.2f, compile %.2f, "
              "check %.2f, timing %.2f)\n\n",
              to_string(report.op), to_string(report.in_dtype), to_string(report.out_dtype),
              static_cast<long long>(report.rows), static_cast<long long>(report.cols),
              report.device.c_str(), report.candidates.size(), report.seconds, report.phases.setup,
              report.phases.compile, report.phases.check, report.phases.timing);
  print_candidates(report, static_cast<double>(report.rows * report.cols) *
                               (size_of(report.in_dtype) + size_of(report.out_dtype)));
}

void print_topk_table(const TopkTuneReport& report) {
  std::printf("softmax_topk %s k=%d (%s indices) %lldx%lld on %s: %zu candidates in %.2f s\n\n",
              to_string(report.in_dtype), report.k, to_string(report.idx_dtype),
              static_cast<long long>(report.rows), static_cast<long long>(report.cols),
              report.device.c_str(), report.candidates.size(), report.seconds);
  print_candidates(report, static_cast<double>(report.rows * report.cols) * size_of(report.in_dtype));
}

/// `kjit tune --op softmax_topk`: logits of --dtype, --k, indices of --index-dtype.
void run_tune_topk(const TuneFlags& flags, Runtime& runtime) {
  const DType in = parse_dtype(flags.dtype), idx = parse_dtype(flags.index_dtype);
  if (flags.k < 1 || flags.k > kMaxTopK || flags.k > flags.cols)
    throw Error(Status::kErrorInvalidArgument,
                "--k must be in 1..min(--cols, " + std::to_string(kMaxTopK) + ") for softmax_topk");
  if (idx != DType::kI32 && idx != DType::kI64)
    throw Error(Status::kErrorInvalidArgument, "--index-dtype must be i32 or i64");
  current_or_primary_context();
  Stream stream = create_stream();
  const TopkTuneReport report =
      tune_topk(runtime, in, idx, flags.rows, flags.cols, flags.k, stream.get());
  if (flags.save) runtime.record_tuning(report);
  if (flags.json) std::printf("%s\n", report.to_json().c_str());
  else print_topk_table(report);
  if (flags.save && !flags.json) std::printf("record stored: calls of this class now use the winner\n");
}

void run_tune(const TuneFlags& flags) {
  if (flags.rows < 1) throw Error(Status::kErrorInvalidArgument, "--rows must be >= 1");
  if (flags.op == "softmax_topk") {
    RuntimeOptions options = RuntimeOptions::from_environment();
    if (!flags.cache_dir.empty()) options.cache_dir = flags.cache_dir;
    if (flags.save) options.disk_cache = true;
    Runtime runtime(options);
    run_tune_topk(flags, runtime);
    return;
  }
  const DType in = parse_dtype(flags.dtype);
  const DType out = flags.out_dtype.empty() ? in : parse_dtype(flags.out_dtype);
  contiguous_problem(parse_row_op(flags.op), in, out, flags.rows, flags.cols);  // checks the flags
  RuntimeOptions options = RuntimeOptions::from_environment();
  if (!flags.cache_dir.empty()) options.cache_dir = flags.cache_dir;
  if (flags.save) options.disk_cache = true;  // a saved record belongs on disk
  Runtime runtime(options);
  bool on_gpu = false;
  const DeviceProps device = target_device(0, &on_gpu);
  Stream stream = create_stream();
  TuneOptions tune_options;
  if (!flags.full) {  // time only what an earlier record of this class has not timed
    RowwiseProblem planned = contiguous_problem(parse_row_op(flags.op), in, out, flags.rows, flags.cols);
    planned.rows = bucket_rows(rows_bucket(flags.rows));
    tune_options.previous_log = TuneRecords(options).find_log(device, key_of(planned));
  }
  const TuneReport report = tune_rowwise(runtime, parse_row_op(flags.op), in, out, flags.rows,
                                         flags.cols, stream.get(), tune_options);
  if (flags.save) runtime.record_tuning(report);
  if (flags.json) std::printf("%s\n", report.to_json().c_str());
  else print_table(report);
  if (flags.save && !flags.json) std::printf("record stored: calls of this class now use the winner\n");
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto flags = std::make_shared<TuneFlags>();
  auto* command = app.add_subcommand("tune", "Tune one shape on this GPU and print every candidate");
  command->add_option("--op", flags->op, "softmax, log_softmax, reduce_scale or softmax_topk")
      ->required();
  command->add_option("--dtype", flags->dtype, "input dtype: f32, f16 or bf16");
  command->add_option("--out-dtype", flags->out_dtype, "output dtype (default: --dtype)");
  command->add_option("--rows", flags->rows, "rows");
  command->add_option("--cols", flags->cols, "columns per row")->required();
  command->add_option("--k", flags->k, "softmax_topk: how many of each row to keep");
  command->add_option("--index-dtype", flags->index_dtype, "softmax_topk: i32 or i64 (default)");
  command->add_flag("--json", flags->json, "print the whole tuning log as JSON");
  command->add_flag("--save", flags->save, "store the winner as this class's tuning record");
  command->add_flag("--full", flags->full,
                    "time every candidate, even those a record has timed (softmax_topk always does)");
  add_cache_dir_option(*command, flags->cache_dir);
  command->callback([flags] { run_tune(*flags); });
}

}  // namespace kjit::cli
