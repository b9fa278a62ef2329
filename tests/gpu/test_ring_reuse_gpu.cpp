// SPDX-License-Identifier: Apache-2.0
// The ring kernel's chunks reused again and again: every ring layout the heuristics and the
// tuner can pick (rowwise_candidates over a set of shapes), each over enough rows that every
// block's ring goes round more than once, launched several times in a row, replayed from CUDA
// graphs with claimed rows and with fixed rows, its outputs poisoned before each run. Every row
// differs, so a chunk read before its new row landed, or overwritten while its outputs were still
// being staged or stored, gives a wrong row: the first run is checked against the float64
// reference and every later one must match it bit for bit (a row's result does not depend on
// which cluster takes it).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/parallel_for.h"

using namespace kjit;
using namespace kjit::test;

namespace {

struct Shape {
  DType dtype;
  std::vector<std::int64_t> planned_rows;  // row counts the candidates are asked for
  std::vector<std::int64_t> cols;          // widest first: the widest shape of a layout runs it
};

// The widths and row counts at which the heuristics and the tuner reach each ring layout: one
// and two consumer groups, slices of one chunk and of several, clusters of 1 to 16 (14 and 15
// too), outputs stored by bulk copies and from registers, rows with a partial last pack.
const Shape kShapes[] = {
    {DType::kF32, {16, 64, 128}, {262144, 200000, 151936, 128256, 100000, 65536, 50257, 32000, 16384, 12000, 8192}},
    {DType::kBF16, {8, 32, 64, 512}, {262144, 229376, 200000, 180000, 151936, 128256, 100000, 65536, 50257, 32000, 16384}},
    {DType::kF16, {32, 512}, {151936, 50257}},
};
const RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};

struct RingCase {
  RowOp op;
  DType dtype;
  std::int64_t rows;
  std::int64_t cols;
  KernelConfig config;
  std::string layout;  // what makes it a layout of its own

  /// Rows padded to whole 16-byte packs: the widest alignment class, which the candidates are
  /// for (a contiguous odd width gives every row its own shift and a pack of 1).
  std::int64_t stride() const {
    const std::int64_t pack = 16 / size_of(dtype);
    return (cols + pack - 1) / pack * pack;
  }

  std::string describe() const {
    return std::string(to_string(op)) + " " + to_string(dtype) + " " + std::to_string(rows) + "x" +
           std::to_string(cols) + " " + config.to_string() + " (" + layout + ")";
  }
};

// The traits of a ring launch that change how its chunks are used and reused. 16-bit types are
// one layout but for log-softmax, whose rows are held as loaded words that fp16 and bf16 convert
// differently.
std::string layout_key(const RowwiseProblem& p, const KernelConfig& c, const RingShape& shape, std::int64_t slots) {
  const bool two_groups = ring_two_groups(c);
  const bool bulk = shape.bulk_stores;
  // With two groups, consecutive uses of a slot alternate between them unless a whole number of
  // row pairs fills the ring.
  const bool crossing = two_groups && slots % (2 * shape.chunks) != 0;
  const bool tail = p.cols % (16 / size_of(p.in_dtype)) != 0;
  const std::string type = size_of(p.in_dtype) == 4 ? "f32"
                           : p.op == RowOp::kLogSoftmax ? to_string(p.in_dtype)
                                                        : "16-bit";
  return type + " " + to_string(p.op) + (two_groups ? " two groups" : " one group") + " cluster " +
         std::to_string(c.cluster) + (shape.chunks > 1 ? " chunks " : " chunk ") +
         (bulk ? "bulk stores" : "register stores") + (crossing ? " slots alternate groups" : "") +
         (tail ? " partial pack" : "");
}

std::vector<RingCase> ring_cases(const DeviceProps& device) {
  std::vector<RingCase> cases;
  std::set<std::string> seen;
  for (const Shape& shape : kShapes)
    for (std::int64_t cols : shape.cols)
      for (std::int64_t planned : shape.planned_rows)
        for (RowOp op : kOps) {
          const RowwiseProblem p{op, shape.dtype, shape.dtype, planned, cols, 16 / size_of(shape.dtype)};
          for (const KernelConfig& c : rowwise_candidates(p, device)) {
            if (c.algorithm != Algorithm::kRing) continue;
            const RingShape ring = ring_shape(p, c);
            const std::int64_t slots = ring.ring_chunks;
            const std::string key = layout_key(p, c, ring, slots);
            if (!seen.insert(key).second) continue;
            // Every cluster that can be resident at once walks its ring round more than once:
            // a ring's worth of rows, and four more.
            const std::int64_t clusters = std::max(1, device.sm_count / c.cluster);
            const std::int64_t rows = clusters * ((slots + ring.chunks - 1) / ring.chunks + 4);
            cases.push_back({op, shape.dtype, rows, cols, c, key});
          }
        }
  return cases;
}

std::vector<unsigned char> download(const void* device, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  KJIT_CU(cuMemcpyDtoH, host.data(), reinterpret_cast<CUdeviceptr>(device), bytes);
  return host;
}

// The output (and reduce_scale's scales) of a finished run, as the kernel wrote them.
struct RunOutput {
  std::vector<unsigned char> out;
  std::vector<unsigned char> scales;
};

RunOutput read_output(const RowBatch& batch, RowOp op) {
  const RowwiseArgs args = batch.args();
  RunOutput got;
  got.out = download(args.out, static_cast<std::size_t>(args.rows * args.out_row_stride) *
                                   size_of(args.out_dtype));
  if (op == RowOp::kReduceScale) got.scales = download(batch.scale_out(), static_cast<std::size_t>(args.rows) * 4);
  return got;
}

// Empty when `got` is byte for byte `want`, else the first row that differs.
std::string compare_runs(const RunOutput& want, const RunOutput& got, std::int64_t stride, int size) {
  if (got.scales != want.scales) return "a scale differs from the first run's";
  const auto mismatch = std::mismatch(want.out.begin(), want.out.end(), got.out.begin());
  if (mismatch.first == want.out.end()) return {};
  const std::int64_t element = (mismatch.first - want.out.begin()) / size;
  return "row " + std::to_string(element / stride) + " col " + std::to_string(element % stride) +
         " differs from the first run's";
}

// Ends a capture even when a call inside it throws, so the stream stays usable.
class Capture {
 public:
  explicit Capture(CUstream stream) : stream_(stream) {
    KJIT_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }
  ~Capture() {
    if (stream_ == nullptr) return;
    CUgraph graph = nullptr;
    cuda().cuStreamEndCapture(stream_, &graph);
    if (graph != nullptr) cuda().cuGraphDestroy(graph);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  GraphExec instantiate() {
    CUgraph raw = nullptr;
    KJIT_CU(cuStreamEndCapture, stream_, &raw);
    stream_ = nullptr;
    const Graph graph(raw);
    CUgraphExec exec = nullptr;
    KJIT_CU(cuGraphInstantiateWithFlags, &exec, graph.get(), 0);
    return GraphExec(exec);
  }

 private:
  CUstream stream_;
};

// One capture at a time: the calls of the other threads then meet no capturing stream but theirs.
std::mutex capture_mutex;

// Runs one case every way; returns what went wrong, empty if nothing did. `fixed` has never
// launched a ring outside a capture, so the launches it captures take fixed rows.
std::string run_case(Runtime& rt, Runtime& fixed, const RingCase& c, std::uint64_t seed) {
  current_or_primary_context();
  Stream stream = create_stream();
  RowBatch batch(BatchLayout{c.dtype, c.dtype, c.rows, c.cols, c.stride(), c.stride()}, seed);
  const RowwiseArgs args = batch.args();
  float* scale = c.op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  const int size = size_of(c.dtype);
  auto launch = [&](Runtime& runtime) { runtime.run_with_config(c.op, args, scale, c.config, stream.get()); };

  batch.reset(stream.get());
  launch(rt);
  synchronize(stream.get());
  std::vector<std::int64_t> every_row(static_cast<std::size_t>(c.rows));
  for (std::size_t row = 0; row < every_row.size(); ++row) every_row[row] = static_cast<std::int64_t>(row);
  if (std::string why = batch.check(c.op, every_row); !why.empty()) return "first run: " + why;
  const RunOutput first = read_output(batch, c.op);
  auto same_as_first = [&](const std::string& run) {
    synchronize(stream.get());
    const std::string why = compare_runs(first, read_output(batch, c.op), c.stride(), size);
    return why.empty() ? why : run + ": " + why;
  };

  // One at a time, poisoned in between; then back to back, each launched behind the last.
  for (int run = 0; run < 3; ++run) {
    batch.reset(stream.get());
    launch(rt);
    if (std::string why = same_as_first("run " + std::to_string(run + 2)); !why.empty()) return why;
  }
  batch.reset(stream.get());
  for (int run = 0; run < 4; ++run) launch(rt);
  if (std::string why = same_as_first("four runs back to back"); !why.empty()) return why;

  // Replays claim rows from the graph's own counter; the other runtime's capture, fixed rows.
  fixed.prepare(c.op, args, c.config);
  GraphExec claimed, fixed_rows;
  {
    std::lock_guard<std::mutex> lock(capture_mutex);
    Capture claiming(stream.get());
    launch(rt);
    launch(rt);
    claimed = claiming.instantiate();
    Capture fixing(stream.get());
    launch(fixed);
    fixed_rows = fixing.instantiate();
  }
  for (const auto& [graph, name] : {std::pair<CUgraphExec, const char*>{claimed.get(), "graph replays"},
                                    std::pair<CUgraphExec, const char*>{fixed_rows.get(), "fixed-row replays"}}) {
    batch.reset(stream.get());
    for (int replay = 0; replay < 3; ++replay) KJIT_CU(cuGraphLaunch, graph, stream.get());
    if (std::string why = same_as_first(name); !why.empty()) return why;
  }
  return {};
}

}  // namespace

TEST_CASE("every ring layout gives the same right rows run after run as its chunks are reused") {
  KJIT_REQUIRE_GPU();
  const DeviceProps device = current_device();
  if (device.arch < 90) {
    MESSAGE("SKIPPED: the ring kernel (bulk async copies, clusters) needs sm_90; this GPU is sm_" << device.arch);
    return;
  }
  const std::uint64_t seed = test_seed();
  std::vector<RingCase> cases = ring_cases(device);
  // KJIT_TEST_FILTER=TEXT keeps the cases whose description contains TEXT.
  if (const char* filter = std::getenv("KJIT_TEST_FILTER"))
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const RingCase& c) { return c.describe().find(filter) == std::string::npos; }),
                cases.end());
  // Both runtimes share a disk cache, so the second loads what the first compiled.
  const std::filesystem::path cache_dir =
      std::filesystem::temp_directory_path() / ("kjit-ring-reuse-" + std::to_string(seed));
  RuntimeOptions options;
  options.cache_dir = cache_dir.string();
  options.tune = TuneMode::kOff;
  Runtime rt(options);
  Runtime fixed(options);

  std::mutex mutex;
  std::vector<std::string> failures;
  std::atomic<int> passed{0};
  const auto start = std::chrono::steady_clock::now();
  kjit::parallel_for(cases.size(), std::min(8, kjit::hardware_threads()), [&](std::size_t i) {
    std::string why;
    try {
      why = run_case(rt, fixed, cases[i], seed);
    } catch (const std::exception& error) {
      why = std::string("threw ") + error.what();
    }
    if (why.empty()) {
      ++passed;
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    failures.push_back(cases[i].describe() + ": " + why);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ignored;
  std::filesystem::remove_all(cache_dir, ignored);
  MESSAGE(passed.load() << " of " << cases.size() << " ring layouts passed 10 runs each in " << seconds
                        << " s (seed " << seed << ")");
  for (std::size_t i = 0; i < failures.size() && i < 25; ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  if (std::getenv("KJIT_TEST_FILTER") == nullptr) CHECK(cases.size() >= 60);
}
