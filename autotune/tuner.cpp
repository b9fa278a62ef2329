// SPDX-License-Identifier: Apache-2.0
#include "autotune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "autotune/candidate_race.h"
#include "autotune/device_check.h"
#include "autotune/scratch_rows.h"
#include "kjit/error.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit {
namespace {

std::size_t output_bytes(const ScratchRows& scratch) {
  const RowwiseArgs args = scratch.args(0);
  return static_cast<std::size_t>(args.rows * args.cols) * size_of(args.out_dtype);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The kernel every candidate's output is checked against: one block a row, reading it twice.
const KernelConfig kReferenceConfig{Algorithm::kBlockOnline};

/// Work run on a thread of its own in the calling thread's CUDA context, beside the candidates'
/// compiles; finish() waits for it and rethrows what it threw.
class SideCompile {
 public:
  template <typename Work>
  explicit SideCompile(Work work) : context_(current_or_primary_context()) {
    thread_ = std::thread([this, work] {
      try {
        KJIT_CU(cuCtxSetCurrent, context_);
        work();
      } catch (...) {
        failure_ = std::current_exception();
      }
    });
  }
  ~SideCompile() {
    if (thread_.joinable()) thread_.join();
  }
  void finish() {
    thread_.join();
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  CUcontext context_;
  std::exception_ptr failure_;
  std::thread thread_;
};

/// What evaluating candidates needs besides the candidate: inputs, the reference output (on the
/// device, beside the candidates' outputs) and the check that compares them there.
struct Bench {
  const ScratchRows& scratch;
  DeviceMemory reference;
  std::unique_ptr<DeviceOutputCheck> check;
};

/// Runs one candidate on scratch set 0, checks it against the reference, and times it: one
/// quick sample first, and the full timing only if that sample is within reach of the best.
void evaluate(Runtime& runtime, RowOp op, Bench& bench, const TuneOptions& options,
              CUstream stream, CandidateResult& candidate, double& best_us,
              TuneReport::Phases& phases) {
  const ScratchRows& scratch = bench.scratch;
  auto start = std::chrono::steady_clock::now();
  scratch.poison_output(0, stream);
  runtime.run_with_config(op, scratch.args(0), scratch.scale(0), candidate.config, stream);
  if (options.sabotage && *options.sabotage == candidate.config)
    KJIT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(scratch.args(0).out), 0x42, 4, stream);
  const std::size_t elements = static_cast<std::size_t>(scratch.args(0).rows * scratch.args(0).cols);
  if (std::string wrong = bench.check->compare(reinterpret_cast<CUdeviceptr>(scratch.args(0).out),
                                               bench.reference.get(), elements, stream);
      !wrong.empty()) {
    candidate.status = wrong;
    phases.check += seconds_since(start);
    return;
  }
  phases.check += seconds_since(start);
  start = std::chrono::steady_clock::now();
  auto enqueue = [&](CUstream s, int i) {
    const int set = i % scratch.sets();
    runtime.run_with_config(op, scratch.args(set), scratch.scale(set), candidate.config, s);
  };
  candidate.timing = time_candidate(enqueue, stream, scratch.sets(), options.timing,
                                    options.probe_cutoff, best_us);
  phases.timing += seconds_since(start);
}

}  // namespace

const CandidateResult* TuneReport::find(const KernelConfig& config) const {
  for (const auto& candidate : candidates)
    if (candidate.config == config) return &candidate;
  return nullptr;
}

std::string TuneReport::to_json() const {
  nlohmann::ordered_json log = {
      {"op", to_string(op)},        {"in", to_string(in_dtype)}, {"out", to_string(out_dtype)},
      {"rows", rows},               {"cols", cols},              {"device", device},
      {"heuristic", nlohmann::json::parse(heuristic.to_json())},
      {"winner", nlohmann::json::parse(winner.to_json())},       {"seconds", seconds},
      {"phase_seconds", {{"setup", phases.setup}, {"compile", phases.compile},
                         {"check", phases.check}, {"timing", phases.timing}}},
      {"candidates", nlohmann::json::array()}};
  for (const auto& c : candidates)
    log["candidates"].push_back({{"config", nlohmann::json::parse(c.config.to_json())},
                                 {"status", c.status},
                                 {"reused", c.reused},
                                 {"median_us", c.timing.median_us},
                                 {"p20_us", c.timing.p20_us},
                                 {"p80_us", c.timing.p80_us}});
  return log.dump(2);
}

std::vector<CandidateResult> TuneReport::candidates_from_json(const std::string& log) {
  try {
    std::vector<CandidateResult> results;
    const nlohmann::json parsed = nlohmann::json::parse(log);  // outlives the loop below
    for (const auto& entry : parsed.at("candidates")) {
      CandidateResult c;
      c.config = KernelConfig::from_json(entry.at("config").dump());
      c.status = entry.at("status").get<std::string>();
      c.timing.median_us = entry.at("median_us").get<double>();
      c.timing.p20_us = entry.at("p20_us").get<double>();
      c.timing.p80_us = entry.at("p80_us").get<double>();
      results.push_back(c);
    }
    return results;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument, std::string("tuning log is malformed: ") + e.what());
  }
}

int reuse_previous(std::vector<CandidateResult>& candidates,
                   const std::vector<CandidateResult>& previous) {
  int reused = 0;
  for (auto& candidate : candidates) {
    if (candidate.status != "ok") continue;  // failed to compile now: that stands
    for (const auto& old : previous) {
      if (old.config != candidate.config) continue;
      candidate.status = old.status;
      candidate.timing = old.timing;
      candidate.reused = true;
      ++reused;
      break;
    }
  }
  return reused;
}

TuneReport tune_rowwise(Runtime& runtime, RowOp op, DType in_dtype, DType out_dtype,
                        std::int64_t rows, std::int64_t cols, CUstream stream,
                        const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const DeviceProps device = current_device_props();
  const std::size_t set_bytes = static_cast<std::size_t>(rows * cols) * (size_of(in_dtype) + size_of(out_dtype));
  ScratchRows scratch(in_dtype, out_dtype, rows, cols, rotating_sets(set_bytes, device.l2_bytes), stream);

  TuneReport report{op, in_dtype, out_dtype, rows, cols, device.name};
  RowwiseProblem planned = validate_rowwise(op, scratch.args(0), scratch.scale(0));
  planned.rows = bucket_rows(rows_bucket(rows));  // what the dispatcher plans for
  report.key = key_of(planned);
  report.heuristic = choose_rowwise_config(planned, device);
  for (const auto& config : rowwise_candidates(planned, device)) report.candidates.push_back({config});
  if (options.previous_log)
    reuse_previous(report.candidates, TuneReport::candidates_from_json(*options.previous_log));

  const int threads = options.compile_threads > 0
                          ? options.compile_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto phase_start = std::chrono::steady_clock::now();
  report.phases.setup = seconds_since(start);
  Bench bench{scratch, allocate_device(output_bytes(scratch)), nullptr};
  // The check's kernel and the reference kernel compile beside the candidates (the reference
  // compiled alone afterwards added about 0.3 s to every shape whose candidates lack it).
  SideCompile check_compile([&] { bench.check = std::make_unique<DeviceOutputCheck>(out_dtype, device); });
  SideCompile reference_compile([&] { runtime.prepare(op, scratch.args(0), kReferenceConfig); });
  compile_all(report.candidates, threads, [&](CandidateResult& candidate) {
    if (!candidate.reused) runtime.prepare(op, scratch.args(0), candidate.config);
  });
  check_compile.finish();
  reference_compile.finish();
  report.phases.compile = seconds_since(phase_start);

  phase_start = std::chrono::steady_clock::now();
  runtime.run_with_config(op, scratch.args(0), scratch.scale(0), kReferenceConfig, stream);
  KJIT_CU(cuMemcpyDtoDAsync, bench.reference.get(), reinterpret_cast<CUdeviceptr>(scratch.args(0).out),
          output_bytes(scratch), stream);
  KJIT_CU(cuStreamSynchronize, stream);
  report.phases.setup += seconds_since(phase_start);

  double best_us = 0.0;  // fastest fully timed candidate so far
  for (const auto& candidate : report.candidates)
    if (candidate.reused && candidate.status == "ok" &&
        (best_us == 0.0 || candidate.timing.median_us < best_us))
      best_us = candidate.timing.median_us;
  evaluate_all(report.candidates, stream, [&](CandidateResult& candidate) {
    if (!candidate.reused) evaluate(runtime, op, bench, options, stream, candidate, best_us, report.phases);
  });
  report.winner = report.candidates[pick_winner(report.candidates, options.tie_fraction)].config;
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace kjit
