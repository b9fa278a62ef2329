// SPDX-License-Identifier: Apache-2.0
#include "autotune/topk_tuner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "autotune/candidate_race.h"
#include "autotune/output_check.h"
#include "autotune/scratch_rows.h"
#include "kjit/error.hpp"
#include "runtime/driver/handles.h"
#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

namespace kjit {
namespace {

/// Rotating sets of logits (the scratch rows' inputs) and one pair of outputs.
struct TopkScratch {
  ScratchRows logits;
  std::int64_t rows, cols;
  int k;
  DType idx_dtype;
  DeviceMemory probs, indices;

  TopkScratch(DType in, DType idx, std::int64_t rows_, std::int64_t cols_, int k_, int sets,
              CUstream stream)
      : logits(in, DType::kF32, rows_, cols_, sets, stream), rows(rows_), cols(cols_), k(k_),
        idx_dtype(idx),
        probs(allocate_device(static_cast<std::size_t>(rows_ * k_) * sizeof(float))),
        indices(allocate_device(static_cast<std::size_t>(rows_ * k_) * size_of(idx))) {}

  TopkArgs args(int set) const {
    TopkArgs args;
    args.logits = logits.args(set).in;
    args.row_stride = cols;
    args.rows = rows;
    args.cols = cols;
    args.in_dtype = logits.args(set).in_dtype;
    args.k = k;
    args.probs_out = reinterpret_cast<float*>(probs.get());
    args.idx_out = reinterpret_cast<void*>(indices.get());
    args.idx_dtype = idx_dtype;
    return args;
  }

  void poison(CUstream stream) const {
    KJIT_CU(cuMemsetD8Async, probs.get(), 0xFF, static_cast<std::size_t>(rows * k) * sizeof(float), stream);
    KJIT_CU(cuMemsetD8Async, indices.get(), 0xFF, static_cast<std::size_t>(rows * k) * size_of(idx_dtype), stream);
  }

  /// Probabilities then indices, as raw bytes.
  void download(std::vector<unsigned char>& probs_bytes, std::vector<unsigned char>& idx_bytes) const {
    probs_bytes.resize(static_cast<std::size_t>(rows * k) * sizeof(float));
    idx_bytes.resize(static_cast<std::size_t>(rows * k) * size_of(idx_dtype));
    KJIT_CU(cuMemcpyDtoH, probs_bytes.data(), probs.get(), probs_bytes.size());
    KJIT_CU(cuMemcpyDtoH, idx_bytes.data(), indices.get(), idx_bytes.size());
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Reference {
  std::vector<unsigned char> probs, indices;
};

/// Empty when the candidate's output matches the reference: the same indices, byte for byte
/// (keys are distinct, so every correct kernel picks and orders them alike), and the same
/// probabilities to fp32 rounding (sums may be taken in another order).
std::string check(const TopkScratch& scratch, const Reference& reference, Reference& got) {
  scratch.download(got.probs, got.indices);
  if (got.indices != reference.indices) {
    std::size_t i = 0;
    while (got.indices[i] == reference.indices[i]) ++i;
    return "wrong: index byte " + std::to_string(i) + " differs from the reference kernel's";
  }
  return compare_outputs(got.probs, reference.probs, DType::kF32);
}

void evaluate(Runtime& runtime, const TopkScratch& scratch, const Reference& reference,
              const TopkTuneOptions& options, CUstream stream, TopkCandidateResult& candidate,
              double& best_us) {
  scratch.poison(stream);
  runtime.softmax_topk_with_config(scratch.args(0), candidate.config, stream);
  if (options.sabotage && *options.sabotage == candidate.config)
    KJIT_CU(cuMemsetD8Async, scratch.indices.get(), 0x42, 4, stream);
  KJIT_CU(cuStreamSynchronize, stream);
  Reference got;
  if (std::string wrong = check(scratch, reference, got); !wrong.empty()) {
    candidate.status = wrong;
    return;
  }
  auto enqueue = [&](CUstream s, int i) {
    runtime.softmax_topk_with_config(scratch.args(i % scratch.logits.sets()), candidate.config, s);
  };
  candidate.timing = time_candidate(enqueue, stream, scratch.logits.sets(), options.timing,
                                    options.probe_cutoff, best_us);
}

}  // namespace

const TopkCandidateResult* TopkTuneReport::find(const TopkConfig& config) const {
  for (const auto& candidate : candidates)
    if (candidate.config == config) return &candidate;
  return nullptr;
}

std::string TopkTuneReport::to_json() const {
  nlohmann::ordered_json log = {{"op", "softmax_topk"},
                                {"in", to_string(in_dtype)},
                                {"index", to_string(idx_dtype)},
                                {"rows", rows},
                                {"cols", cols},
                                {"k", k},
                                {"device", device},
                                {"heuristic", nlohmann::json::parse(heuristic.to_json())},
                                {"winner", nlohmann::json::parse(winner.to_json())},
                                {"seconds", seconds},
                                {"candidates", nlohmann::json::array()}};
  for (const auto& c : candidates)
    log["candidates"].push_back({{"config", nlohmann::json::parse(c.config.to_json())},
                                 {"status", c.status},
                                 {"median_us", c.timing.median_us},
                                 {"p20_us", c.timing.p20_us},
                                 {"p80_us", c.timing.p80_us}});
  return log.dump(2);
}

TopkTuneReport tune_topk(Runtime& runtime, DType in_dtype, DType idx_dtype, std::int64_t rows,
                         std::int64_t cols, int k, CUstream stream,
                         const TopkTuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const DeviceProps device = current_device_props();
  const std::size_t set_bytes = static_cast<std::size_t>(rows * cols) * size_of(in_dtype);
  TopkScratch scratch(in_dtype, idx_dtype, rows, cols, k, rotating_sets(set_bytes, device.l2_bytes),
                      stream);

  TopkTuneReport report{in_dtype, idx_dtype, rows, cols, k, device.name};
  const TopkProblem planned = planned_topk(validate_topk(scratch.args(0)));
  report.key = key_of(planned);
  report.heuristic = choose_topk_config(planned, device);
  for (const auto& config : topk_candidates(planned, device)) report.candidates.push_back({config});

  const int threads = options.compile_threads > 0
                          ? options.compile_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  compile_all(report.candidates, threads, [&](TopkCandidateResult& candidate) {
    runtime.explain_topk(scratch.args(0), &candidate.config);
  });

  // The reference: the stream kernel with one block per row, the simplest way through it.
  scratch.poison(stream);
  runtime.softmax_topk_with_config(scratch.args(0),
                                   TopkConfig{0, 256, 0, 1, TopkAlgorithm::kStream}, stream);
  KJIT_CU(cuStreamSynchronize, stream);
  Reference reference;
  scratch.download(reference.probs, reference.indices);

  double best_us = 0.0;
  evaluate_all(report.candidates, stream, [&](TopkCandidateResult& candidate) {
    evaluate(runtime, scratch, reference, options, stream, candidate, best_us);
  });
  report.winner = report.candidates[pick_winner(report.candidates, options.tie_fraction)].config;
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace kjit
