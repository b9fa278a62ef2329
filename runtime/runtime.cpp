// SPDX-License-Identifier: Apache-2.0
#include "kjit/runtime.hpp"

#include <cstdio>

#include "autotune/topk_tuner.h"
#include "autotune/tuner.h"
#include "runtime/dispatcher.h"
#include "runtime/driver/handles.h"
#include "runtime/log.h"

namespace kjit {

Runtime::Runtime() : Runtime(RuntimeOptions::from_environment()) {}

Runtime::Runtime(const RuntimeOptions& options) : dispatcher_(std::make_unique<Dispatcher>(options)) {
  // KJIT_TUNE=first-use: a new problem class (row-wise or top-K) is tuned on its first call
  // (blocking), on scratch buffers of the same shape, and the record is kept for every later
  // call and process. Tuning uses a stream of its own: capture needs a real stream, and the
  // caller's queue is left alone.
  dispatcher_->set_first_use_tuner([this](RowOp op, const RowwiseArgs& args, CUstream) {
    log().info("tuning {} {}->{} {}x{} (first use; a few seconds)", to_string(op),
               to_string(args.in_dtype), to_string(args.out_dtype), args.rows, args.cols);
    Stream stream = create_stream();
    TuneOptions options;
    options.timing.reset_persisting_l2 = false;  // the application's L2 lines are its own
    const TuneReport report = tune_rowwise(*this, op, args.in_dtype, args.out_dtype, args.rows,
                                           args.cols, stream.get(), options);
    record_tuning(report);
  });
  dispatcher_->set_first_use_topk_tuner([this](const TopkArgs& args, CUstream) {
    log().info("tuning softmax_topk {} k={} {}x{} (first use; a few seconds)",
               to_string(args.in_dtype), args.k, args.rows, args.cols);
    Stream stream = create_stream();
    TopkTuneOptions options;
    options.timing.reset_persisting_l2 = false;
    record_tuning(tune_topk(*this, args.in_dtype, args.idx_dtype, args.rows, args.cols, args.k,
                            stream.get(), options));
  });
}

void Runtime::record_tuning(const TuneReport& report) {
  // What `kjit inspect` shows for the record: the class, the winner, its time and bandwidth.
  const CandidateResult* winner = report.find(report.winner);
  const double bytes = static_cast<double>(report.rows * report.cols) *
                       (size_of(report.in_dtype) + size_of(report.out_dtype));
  char summary[256];
  std::snprintf(summary, sizeof(summary), "tuned %s %s->%s %lldx%lld: %s, %.2f us, %.0f GB/s",
                to_string(report.op), to_string(report.in_dtype), to_string(report.out_dtype),
                static_cast<long long>(report.rows), static_cast<long long>(report.cols),
                report.winner.to_string().c_str(), winner ? winner->timing.median_us : 0.0,
                winner ? bytes / (winner->timing.median_us * 1e3) : 0.0);
  dispatcher_->records().put(current_device_props(), report.key, report.winner, report.to_json(),
                             summary);
  dispatcher_->forget(report.key);  // the next call of this class resolves again, to the winner
}

void Runtime::record_tuning(const TopkTuneReport& report) {
  const TopkCandidateResult* winner = report.find(report.winner);
  const double bytes = static_cast<double>(report.rows * report.cols) * size_of(report.in_dtype);
  char summary[256];
  std::snprintf(summary, sizeof(summary), "tuned softmax_topk %s k=%d %lldx%lld: %s, %.2f us, %.0f GB/s",
                to_string(report.in_dtype), report.k, static_cast<long long>(report.rows),
                static_cast<long long>(report.cols), report.winner.to_string().c_str(),
                winner ? winner->timing.median_us : 0.0,
                winner ? bytes / (winner->timing.median_us * 1e3) : 0.0);
  dispatcher_->records().put(current_device_props(), report.key, report.winner, report.to_json(),
                             summary);
  dispatcher_->forget(report.key);
}

Runtime::~Runtime() = default;

void Runtime::softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run(RowOp::kSoftmax, args, nullptr, static_cast<CUstream>(stream), nullptr);
}

void Runtime::log_softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run(RowOp::kLogSoftmax, args, nullptr, static_cast<CUstream>(stream), nullptr);
}

void Runtime::reduce_scale(const RowwiseArgs& args, float* scale_out, void* stream) {
  dispatcher_->run(RowOp::kReduceScale, args, scale_out, static_cast<CUstream>(stream), nullptr);
}

void Runtime::softmax_topk(const TopkArgs& args, void* stream) {
  dispatcher_->run_topk(args, static_cast<CUstream>(stream), nullptr);
}

void Runtime::softmax_topk_with_config(const TopkArgs& args, const TopkConfig& config,
                                       void* stream) {
  dispatcher_->run_topk(args, static_cast<CUstream>(stream), &config);
}

KernelReport Runtime::explain_topk(const TopkArgs& args, const TopkConfig* config) {
  return dispatcher_->explain_topk(args, config);
}

void Runtime::run_with_config(RowOp op, const RowwiseArgs& args, float* scale_out,
                              const KernelConfig& config, void* stream) {
  dispatcher_->run(op, args, scale_out, static_cast<CUstream>(stream), &config);
}

KernelReport Runtime::explain(RowOp op, const RowwiseArgs& args) {
  return dispatcher_->explain(op, args, nullptr);
}

KernelReport Runtime::prepare(RowOp op, const RowwiseArgs& args, const KernelConfig& config) {
  return dispatcher_->explain(op, args, &config);
}

}  // namespace kjit
