// SPDX-License-Identifier: Apache-2.0
// Kernels that follow one another in a stream, where the second may launch while the first is
// still running (programmatic dependent launch, sm_90+). Each chain is built so that a kernel
// touching memory before the one before it has finished shows as a wrong answer:
//   1. softmax (or log_softmax) reads x and writes y;
//   2. the dependent reads y (read after write) and writes its output over x (write after read).
// Afterwards y must be the reference of the generated x, and the dependent's output the
// reference of y as read back. The ring, 16-bit warp and block_regs, and cluster over wide
// slices ask L2 for their first rows before they wait (l2_prefetch.cuh): had that fetched a
// line the first kernel was still to write, the dependent would read it stale and show the same
// way. Every algorithm that can run a shape is the dependent once, and the chain is replayed
// from a CUDA graph too (captured launches keep the dependency as an edge).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/driver/handles.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_problem.h"
#include "support/numeric_host.h"
#include "support/reference.h"
#include "support/topk_reference.h"

using namespace kjit;
using namespace kjit::test;

namespace {

// Large enough that the first kernel of a chain runs for tens of microseconds, so a dependent
// that did not wait would read rows not yet written.
const BatchLayout kUnits[] = {
    {DType::kF32, DType::kF32, 4096, 1024},
    // 16-bit rows a warp, whose blocks ask L2 for their rows before they wait.
    {DType::kBF16, DType::kBF16, 16384, 1024},
    {DType::kBF16, DType::kBF16, 2048, 8192},
    {DType::kF32, DType::kF32, 256, 32000},
    // Few wide rows: the persistent kernels cover them in one round, so they launch as dependents.
    {DType::kF32, DType::kF32, 4, 262144},
    // Wide 16-bit rows in several rounds, where the ring's two consumer groups still launch as
    // dependents.
    {DType::kBF16, DType::kBF16, 64, 131072},
};

std::vector<KernelConfig> dependents() {
  std::vector<KernelConfig> configs;
  for (Algorithm algorithm : {Algorithm::kWarp, Algorithm::kBlockRegs, Algorithm::kBlockSmem,
                              Algorithm::kBlockOnline, Algorithm::kCluster, Algorithm::kClusterSmem,
                              Algorithm::kStream, Algorithm::kRing, Algorithm::kBlockSplit})
    configs.push_back(KernelConfig{algorithm});
  // The ring's two consumer groups taking turns over the rows.
  configs.push_back(KernelConfig{Algorithm::kRing, 0, 512, 256, 0});
  // The cluster kernels' resident grids are persistent (never dependents); one cluster a row is.
  for (Algorithm algorithm : {Algorithm::kCluster, Algorithm::kClusterSmem})
    configs.push_back(KernelConfig{algorithm, 0, 0, 0, 0, ClusterGrid::kPerRow});
  // Slices of 16384 columns, which the cluster kernel asks L2 for before it waits (16-bit: 32 KB).
  configs.push_back(KernelConfig{Algorithm::kCluster, 0, 512, 0, 8, ClusterGrid::kPerRow});
  return configs;
}

std::vector<unsigned char> read_back(const void* device, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  KJIT_CU(cuMemcpyDtoH, host.data(), reinterpret_cast<CUdeviceptr>(device), bytes);
  return host;
}

// Row `row` of a read-back buffer of `cols` elements of `dtype` a row, as doubles.
std::vector<double> row_values(const std::vector<unsigned char>& data, DType dtype, std::int64_t row,
                               std::int64_t cols) {
  std::vector<double> values(static_cast<std::size_t>(cols));
  for (std::int64_t c = 0; c < cols; ++c)
    values[static_cast<std::size_t>(c)] =
        load_element(dtype, data.data(), static_cast<std::size_t>(row * cols + c));
  return values;
}

// The dependent's arguments: y in, x out.
RowwiseArgs reversed(const RowwiseArgs& first) {
  RowwiseArgs args = first;
  args.in = first.out;
  args.in_row_stride = first.out_row_stride;
  args.out = const_cast<void*>(first.in);
  args.out_row_stride = first.in_row_stride;
  args.in_dtype = first.out_dtype;
  args.out_dtype = first.in_dtype;
  return args;
}

// Both halves of a finished chain: y against the generated x, and the dependent's log_softmax
// (written over x) against y as read back. Empty when both hold.
std::string check_chain(const RowBatch& batch) {
  const std::vector<std::int64_t> rows = rows_to_check(batch.layout().rows, test_seed());
  if (std::string first = batch.check(RowOp::kSoftmax, rows); !first.empty()) return "first kernel: " + first;
  const RowwiseArgs args = reversed(batch.args());
  const std::size_t elements = static_cast<std::size_t>(args.rows * args.cols);
  const std::vector<unsigned char> y = read_back(args.in, elements * size_of(args.in_dtype));
  const std::vector<unsigned char> out = read_back(args.out, elements * size_of(args.out_dtype));
  std::vector<double> reference(static_cast<std::size_t>(args.cols));
  for (std::int64_t row : rows) {
    const std::vector<double> in = row_values(y, args.in_dtype, row, args.cols);
    reference_row(RowOp::kLogSoftmax, in.data(), reference.data(), args.cols, nullptr);
    const unsigned char* got =
        out.data() + static_cast<std::size_t>(row * args.cols) * size_of(args.out_dtype);
    if (std::string why = compare_row(RowOp::kLogSoftmax, args.out_dtype, got, reference.data(), args.cols);
        !why.empty())
      return "dependent, row " + std::to_string(row) + ": " + why;
  }
  return "";
}

// Why `config` cannot run the dependent of `layout`'s chain here; empty when it can. Decided
// before a batch is made: a batch's buffers are allocation-aligned (256 bytes), as this
// placeholder address is.
std::string why_not(const BatchLayout& layout, const DeviceProps& device, const KernelConfig& config) {
  void* const aligned = reinterpret_cast<void*>(std::uintptr_t{256});
  const RowwiseArgs args{aligned,     layout.cols, aligned,          layout.cols,
                         layout.rows, layout.cols, layout.out_dtype, layout.in_dtype};
  const RowwiseProblem problem{RowOp::kLogSoftmax, args.in_dtype, args.out_dtype,
                               args.rows,          args.cols,     max_pack_for(args)};
  return why_not_rowwise(problem, device, complete_rowwise_config(problem, device, config));
}

// The top-K output of `rows` (probabilities and i64 indices as read back) against the reference
// of `logits` as read back. Empty when every slot matches.
std::string check_topk_rows(const std::vector<unsigned char>& logits, const BatchLayout& layout,
                            std::int32_t k, const std::vector<unsigned char>& probs,
                            const std::vector<unsigned char>& indices,
                            const std::vector<std::int64_t>& rows) {
  for (std::int64_t row : rows) {
    const std::vector<double> values = row_values(logits, layout.out_dtype, row, layout.cols);
    const TopkRowExpectation want = reference_topk_row(values.data(), layout.cols, k, k, 1.0f, 0);
    for (std::int32_t slot = 0; slot < k; ++slot) {
      const std::string where = "row " + std::to_string(row) + " slot " + std::to_string(slot) + ": ";
      const std::size_t at = static_cast<std::size_t>(row * k + slot);
      std::int64_t index = 0;
      std::memcpy(&index, indices.data() + at * sizeof(index), sizeof(index));
      const std::int64_t want_index = want.indices[static_cast<std::size_t>(slot)];
      if (index != want_index)
        return where + "index " + std::to_string(index) + ", want " + std::to_string(want_index);
      const double prob = load_element(DType::kF32, probs.data(), at);
      if (std::string why = check_topk_value(prob, want.probs[static_cast<std::size_t>(slot)], false);
          !why.empty())
        return where + why;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("a kernel launched behind another waits for its writes and its reads") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  const DeviceProps device = current_device();
  if (!device.dependent_launch)
    MESSAGE("this device launches every kernel after the one before it; the chains check that order");
  Stream stream = create_stream();
  int chains = 0;
  for (const BatchLayout& layout : kUnits) {
    for (const KernelConfig& config : dependents()) {
      if (!why_not(layout, device, config).empty()) continue;
      RowBatch batch(layout, test_seed());
      batch.reset(stream.get());
      synchronize(stream.get());
      rt.softmax(batch.args(), stream.get());
      rt.run_with_config(RowOp::kLogSoftmax, reversed(batch.args()), nullptr, config, stream.get());
      synchronize(stream.get());
      const std::string failure = check_chain(batch);
      CHECK_MESSAGE(failure.empty(), describe(layout) << " then " << config.to_string() << ": " << failure);
      ++chains;
    }
  }
  MESSAGE(chains << " chains checked");
  CHECK(chains >= 15);
}

TEST_CASE("a chain captured in a CUDA graph keeps its order when replayed") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  for (const BatchLayout& layout : kUnits) {
    RowBatch batch(layout, test_seed());
    // First calls compile and load, which capture forbids; the chain they leave is discarded.
    rt.softmax(batch.args(), stream.get());
    rt.log_softmax(reversed(batch.args()), stream.get());
    synchronize(stream.get());

    RowBatch fresh(layout, test_seed());
    fresh.reset(stream.get());
    synchronize(stream.get());
    KJIT_CU(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    rt.softmax(fresh.args(), stream.get());
    rt.log_softmax(reversed(fresh.args()), stream.get());
    CUgraph raw_graph = nullptr;
    KJIT_CU(cuStreamEndCapture, stream.get(), &raw_graph);
    Graph graph(raw_graph);
    CUgraphExec raw_exec = nullptr;
    KJIT_CU(cuGraphInstantiateWithFlags, &raw_exec, graph.get(), 0);
    GraphExec exec(raw_exec);
    KJIT_CU(cuGraphLaunch, exec.get(), stream.get());
    synchronize(stream.get());
    const std::string failure = check_chain(fresh);
    CHECK_MESSAGE(failure.empty(), describe(layout) << " from a graph: " << failure);
  }
}

TEST_CASE("softmax_topk launched behind a row-wise kernel reads its output and spares its input") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  const BatchLayout layouts[] = {{DType::kF32, DType::kF32, 64, 50257},
                                 {DType::kBF16, DType::kBF16, 8, 128256},
                                 {DType::kF32, DType::kF32, 4096, 1000}};
  const std::int32_t k = 50;
  for (const BatchLayout& layout : layouts) {
    RowBatch batch(layout, test_seed());
    batch.reset(stream.get());
    DeviceBuffer indices(static_cast<std::size_t>(layout.rows * k) * sizeof(std::int64_t));
    synchronize(stream.get());
    // log_softmax reads x and writes y; top-K reads y and writes its probabilities over x.
    const RowwiseArgs first = batch.args();
    TopkArgs topk;
    topk.logits = first.out;
    topk.row_stride = first.out_row_stride;
    topk.rows = layout.rows;
    topk.cols = layout.cols;
    topk.in_dtype = layout.out_dtype;
    topk.k = k;
    topk.probs_out = static_cast<float*>(const_cast<void*>(first.in));
    topk.idx_out = indices.pointer();
    rt.log_softmax(first, stream.get());
    rt.softmax_topk(topk, stream.get());
    synchronize(stream.get());

    const std::vector<std::int64_t> rows = rows_to_check(layout.rows, test_seed());
    CHECK_MESSAGE(batch.check(RowOp::kLogSoftmax, rows) == "",
                  describe(layout) << ": log_softmax's input was overwritten early");
    const std::size_t elements = static_cast<std::size_t>(layout.rows * layout.cols);
    const std::vector<unsigned char> y = read_back(first.out, elements * size_of(layout.out_dtype));
    const std::vector<unsigned char> probs =
        read_back(topk.probs_out, static_cast<std::size_t>(layout.rows * k) * sizeof(float));
    const std::vector<unsigned char> idx = indices.download_all();
    const std::string failure = check_topk_rows(y, layout, k, probs, idx, rows);
    CHECK_MESSAGE(failure.empty(), describe(layout) << ", top-" << k << ": " << failure);
  }
}
