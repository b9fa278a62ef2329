// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "kjit/options.hpp"
#include "kjit/tuning.hpp"
#include "kjit/types.hpp"

namespace kjit {

class Dispatcher;

/// What the dispatcher chose for one call: the kernel and its resources.
struct KernelReportBase {
  std::string kernel_key;      ///< digest of the kernel (cubin) key
  std::string name_expression; ///< e.g. kjit::warp<0, kjit::Io<float, float>, 1024, 4, 128, 32>
  std::string arch;            ///< e.g. sm_90
  int registers = 0;
  int spill_bytes = 0;         ///< spill stores + loads reported by ptxas
  int static_smem = 0;         ///< bytes
  int dynamic_smem = 0;        ///< bytes asked for at launch
  std::size_t cubin_bytes = 0;
  double compile_ms = 0.0;     ///< 0 when it came from a cache
};

/// The same with the op family's config.
template <typename Config>
struct KernelReportOf : KernelReportBase {
  Config config;
};
using KernelReport = KernelReportOf<KernelConfig>;
using TopkKernelReport = KernelReportOf<TopkConfig>;
using AttentionKernelReport = KernelReportOf<AttentionConfig>;

/// The entry point of kjit: owns the compiled kernels of every device context it has served.
/// Thread-safe; one Runtime per process is the intended use. GPU calls run in the calling
/// thread's current CUDA context, else in device 0's primary context (as the CUDA runtime does).
class Runtime {
 public:
  /// Options come from the environment (KJIT_* variables).
  Runtime();
  /// Options as given; the environment is not read.
  explicit Runtime(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// out = softmax(in) per row. `stream` is a CUstream / cudaStream_t (nullptr: default stream).
  void softmax(const RowwiseArgs& args, void* stream = nullptr);
  /// out = log_softmax(in) per row.
  void log_softmax(const RowwiseArgs& args, void* stream = nullptr);
  /// out = in / max|in| per row (a row of zeros gives zeros); `scale_out` (may be null)
  /// receives max|in| per row in fp32.
  void reduce_scale(const RowwiseArgs& args, float* scale_out, void* stream = nullptr);

  /// Fused softmax + top-K (see TopkArgs): one pass over the logits.
  void softmax_topk(const TopkArgs& args, void* stream = nullptr);
  /// softmax_topk with the given config (zero fields are filled in) instead of the dispatcher's
  /// choice. Throws Error(kErrorInvalidConfig) when the config cannot run this problem.
  void softmax_topk_with_config(const TopkArgs& args, const TopkConfig& config,
                                void* stream = nullptr);
  /// The kernel softmax_topk would use (or `config`'s, when given), compiled and loaded
  /// without launching anything.
  TopkKernelReport explain_topk(const TopkArgs& args, const TopkConfig* config = nullptr);

  /// Batched attention (see AttentionArgs): every problem of the batch in one launch.
  void attention(const AttentionArgs& args, void* stream = nullptr);
  /// attention with the given config (zero fields are filled in) instead of the dispatcher's
  /// choice. Throws Error(kErrorInvalidConfig) when the config cannot run this problem.
  void attention_with_config(const AttentionArgs& args, const AttentionConfig& config,
                             void* stream = nullptr);
  /// The kernel attention would use (or `config`'s, when given), compiled and loaded without
  /// launching anything.
  AttentionKernelReport explain_attention(const AttentionArgs& args,
                                          const AttentionConfig* config = nullptr);

  /// Runs `op` with the given config instead of the dispatcher's choice (zero fields are
  /// filled in). Throws Error(kErrorInvalidConfig) when the config cannot run this problem.
  void run_with_config(RowOp op, const RowwiseArgs& args, float* scale_out,
                       const KernelConfig& config, void* stream = nullptr);

  /// The kernel the dispatcher would use for this call on the current device (compiling it if
  /// needed), without launching anything.
  KernelReport explain(RowOp op, const RowwiseArgs& args);

  /// Compiles and loads the kernel of `config` for this call's shape without launching it, so
  /// that a later run_with_config launches at once. Safe to call from many threads.
  KernelReport prepare(RowOp op, const RowwiseArgs& args, const KernelConfig& config);

  /// Tunes `op` for contiguous [rows, cols] tensors of the given dtypes on the current device,
  /// on buffers of its own (never the caller's), on `stream` (null: a stream of its own).
  TuneReport<KernelConfig> tune(RowOp op, DType in_dtype, DType out_dtype, std::int64_t rows,
                                std::int64_t cols, const TuneOptions<KernelConfig>& options = {},
                                void* stream = nullptr);
  /// Tunes softmax_topk for contiguous [rows, cols] logits, `k` and `idx_dtype` (flags 0,
  /// temperature 1, no per-row k).
  TuneReport<TopkConfig> tune_topk(DType in_dtype, DType idx_dtype, std::int64_t rows,
                                   std::int64_t cols, int k,
                                   const TuneOptions<TopkConfig>& options = {},
                                   void* stream = nullptr);

  /// Tunes attention for contiguous [batch, heads, tokens, dim] tensors of this call's shape,
  /// dtypes, bias and mask kinds and causality (its pointers and strides are not used).
  TuneReport<AttentionConfig> tune_attention(const AttentionArgs& args,
                                             const TuneOptions<AttentionConfig>& options = {},
                                             void* stream = nullptr);

  /// Stores a tuning result as the record that calls of its problem class use from now on (with
  /// KJIT_TUNE=cached or first-use), in this process and on disk. False when the disk refused it.
  bool record_tuning(const TuneReport<KernelConfig>& report);
  bool record_tuning(const TuneReport<TopkConfig>& report);
  bool record_tuning(const TuneReport<AttentionConfig>& report);

 private:
  friend struct RuntimeAccess;  // kjit's own tools reach the dispatcher (runtime/runtime_access.h)
  std::unique_ptr<Dispatcher> dispatcher_;
};

}  // namespace kjit
