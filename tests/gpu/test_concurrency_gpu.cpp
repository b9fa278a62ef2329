// SPDX-License-Identifier: Apache-2.0
// Many threads meeting one new shape at once (the compile-and-load path under contention), CUDA
// graph capture (once a shape's kernel is loaded, a call only launches: no allocation, no
// synchronization, so it can be captured and replayed), and ring launches on several streams at
// once, each with the row-claim counters of its own stream or capture.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"

using namespace kjit;
using namespace kjit::test;

namespace {

constexpr int kThreads = 8;

// Lets every thread finish its setup, then releases them together.
class StartLine {
 public:
  explicit StartLine(int threads) : waiting_(threads) {}
  void arrive_and_wait() {
    --waiting_;
    while (waiting_.load() > 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> waiting_;
};

// Each thread runs `op` on its own batch of `layouts[t]` at the same moment; returns failures.
std::vector<std::string> race(Runtime& rt, RowOp op, const std::vector<BatchLayout>& layouts) {
  std::vector<std::string> failures(layouts.size());
  StartLine start(static_cast<int>(layouts.size()));
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < layouts.size(); ++t) {
    threads.emplace_back([&, t] {
      std::string& failure = failures[t];
      try {
        current_or_primary_context();
        Stream stream = create_stream();
        RowBatch batch(layouts[t], test_seed() + t);
        float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
        batch.reset(stream.get());
        synchronize(stream.get());
        start.arrive_and_wait();
        run_auto(rt, op, batch.args(), scale, stream.get());
        synchronize(stream.get());
        failure = batch.check(op, rows_to_check(layouts[t].rows, test_seed()));
      } catch (const std::exception& error) {
        failure = std::string("threw ") + error.what();
      }
      if (!failure.empty()) failure = "thread " + std::to_string(t) + " " + describe(layouts[t]) + ": " + failure;
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<std::string> real;
  for (auto& failure : failures)
    if (!failure.empty()) real.push_back(failure);
  return real;
}

void report(const std::vector<std::string>& failures) {
  for (const std::string& failure : failures) FAIL_CHECK(failure);
}

// Ends a capture even when a call inside it throws, so the stream stays usable.
class Capture {
 public:
  explicit Capture(CUstream stream) : stream_(stream) {
    KJIT_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }
  ~Capture() {
    if (stream_ != nullptr) {
      CUgraph graph = nullptr;
      cuda().cuStreamEndCapture(stream_, &graph);
      if (graph != nullptr) cuda().cuGraphDestroy(graph);
    }
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  /// Ends the capture; the driver's result is returned so a broken capture is reported.
  CUresult end(Graph* graph) {
    CUgraph raw = nullptr;
    const CUresult result = cuda().cuStreamEndCapture(stream_, &raw);
    stream_ = nullptr;
    *graph = Graph(raw);
    return result;
  }

 private:
  CUstream stream_;
};

}  // namespace

TEST_CASE("eight threads meet one new shape at once") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  // 7777 columns: no other suite uses it, so the first call of every thread is a miss.
  const std::vector<BatchLayout> same(kThreads, BatchLayout{DType::kF32, DType::kF32, 64, 7777});
  report(race(rt, RowOp::kSoftmax, same));
}

TEST_CASE("eight threads compile eight new shapes at once") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  std::vector<BatchLayout> different;
  for (int t = 0; t < kThreads; ++t)
    different.push_back(BatchLayout{t % 2 ? DType::kBF16 : DType::kF32, DType::kF32, 16 + t, 7000 + 37 * t});
  report(race(rt, RowOp::kLogSoftmax, different));
  report(race(rt, RowOp::kReduceScale, different));
}

TEST_CASE("calls of loaded shapes can be captured in a CUDA graph") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  current_or_primary_context();
  Stream stream = create_stream();
  RowBatch a(BatchLayout{DType::kF32, DType::kF32, 64, 1000}, test_seed());
  RowBatch b(BatchLayout{DType::kBF16, DType::kBF16, 7, 4097}, test_seed());
  RowBatch c(BatchLayout{DType::kF16, DType::kF32, 33, 50257}, test_seed());
  RowBatch d(BatchLayout{DType::kF32, DType::kF32, 9, 3000}, test_seed());
  const KernelConfig online{Algorithm::kBlockOnline};
  auto enqueue_all = [&] {
    rt.softmax(a.args(), stream.get());
    rt.log_softmax(b.args(), stream.get());
    rt.reduce_scale(c.args(), c.scale_out(), stream.get());
    rt.run_with_config(RowOp::kSoftmax, d.args(), nullptr, online, stream.get());
  };
  auto reset_all = [&] {
    for (RowBatch* batch : {&a, &b, &c, &d}) batch->reset(stream.get());
    synchronize(stream.get());
  };
  auto check_all = [&] {
    CHECK(a.check(RowOp::kSoftmax, rows_to_check(64, test_seed())) == "");
    CHECK(b.check(RowOp::kLogSoftmax, rows_to_check(7, test_seed())) == "");
    CHECK(c.check(RowOp::kReduceScale, rows_to_check(33, test_seed())) == "");
    CHECK(d.check(RowOp::kSoftmax, rows_to_check(9, test_seed())) == "");
  };

  // First calls compile and load; they run eagerly.
  reset_all();
  enqueue_all();
  synchronize(stream.get());
  check_all();

  reset_all();
  Graph graph;
  {
    Capture capture(stream.get());
    try {
      enqueue_all();
    } catch (const Error& error) {
      FAIL_CHECK("a call of a loaded shape failed under capture: " << std::string(error.what()));
    }
    const CUresult ended = capture.end(&graph);
    REQUIRE_MESSAGE(ended == CUDA_SUCCESS, "cuStreamEndCapture returned " << static_cast<int>(ended)
                                               << " (a call allocated or synchronized while capturing)");
  }
  REQUIRE(graph);
  // Captured work has not run: every output is still poisoned.
  synchronize(stream.get());
  CHECK(a.check(RowOp::kSoftmax, {0}).find("never written") != std::string::npos);

  CUgraphExec raw_exec = nullptr;
  KJIT_CU(cuGraphInstantiateWithFlags, &raw_exec, graph.get(), 0);
  GraphExec exec(raw_exec);
  KJIT_CU(cuGraphLaunch, exec.get(), stream.get());
  synchronize(stream.get());
  check_all();

  // Replays are independent of the calls that built them.
  reset_all();
  KJIT_CU(cuGraphLaunch, exec.get(), stream.get());
  synchronize(stream.get());
  check_all();
}

TEST_CASE("ring launches on four streams at once, eager and replayed, each write every row") {
  // The ring's clusters claim rows from a counter that one launch at a time may use: launches
  // that shared one would each miss the rows the other claimed, and leave them poisoned.
  KJIT_REQUIRE_GPU();
  Runtime rt;
  current_or_primary_context();
  struct Lane {
    BatchLayout layout;
    KernelConfig config;
  };
  const Lane lanes[] = {{{DType::kF32, DType::kF32, 64, 131072}, {Algorithm::kRing, 0, 512, 256, 0}},
                        {{DType::kBF16, DType::kBF16, 96, 100000}, {Algorithm::kRing, 0, 512, 256, 8}},
                        {{DType::kF32, DType::kF32, 40, 262144}, {Algorithm::kRing, 0, 512, 256, 0}},
                        {{DType::kBF16, DType::kBF16, 64, 262144}, {Algorithm::kRing, 0, 512, 256, 16}}};
  constexpr int kStreams = 4;
  constexpr int kRounds = 3;
  std::vector<Stream> streams;
  std::vector<std::unique_ptr<RowBatch>> batches;
  std::vector<GraphExec> graphs;
  // Captures first, one after another: a synchronization anywhere on the device while a stream
  // captures would end the capture.
  for (int t = 0; t < kStreams; ++t) {
    streams.push_back(create_stream());
    batches.push_back(std::make_unique<RowBatch>(lanes[t].layout, test_seed() + t));
    auto ring = [&] {
      rt.run_with_config(RowOp::kSoftmax, batches[t]->args(), nullptr, lanes[t].config, streams[t].get());
    };
    ring();  // loads the kernel outside the capture
    synchronize(streams[t].get());
    Graph graph;
    {
      Capture capture(streams[t].get());
      for (int i = 0; i < 3; ++i) ring();
      REQUIRE(capture.end(&graph) == CUDA_SUCCESS);
    }
    CUgraphExec raw_exec = nullptr;
    KJIT_CU(cuGraphInstantiateWithFlags, &raw_exec, graph.get(), 0);
    graphs.emplace_back(raw_exec);
  }
  std::vector<std::string> failures(kStreams);
  StartLine start(kStreams);
  std::vector<std::thread> threads;
  for (int t = 0; t < kStreams; ++t) {
    threads.emplace_back([&, t] {
      std::string& failure = failures[t];
      try {
        current_or_primary_context();
        CUstream stream = streams[t].get();
        RowBatch& batch = *batches[t];
        std::vector<std::int64_t> every_row(static_cast<std::size_t>(lanes[t].layout.rows));
        for (std::size_t row = 0; row < every_row.size(); ++row) every_row[row] = static_cast<std::int64_t>(row);
        start.arrive_and_wait();
        for (int round = 0; round < kRounds && failure.empty(); ++round) {
          batch.reset(stream);
          for (int i = 0; i < 4; ++i)
            rt.run_with_config(RowOp::kSoftmax, batch.args(), nullptr, lanes[t].config, stream);
          synchronize(stream);
          failure = batch.check(RowOp::kSoftmax, every_row);
          if (!failure.empty()) break;
          batch.reset(stream);
          KJIT_CU(cuGraphLaunch, graphs[t].get(), stream);
          KJIT_CU(cuGraphLaunch, graphs[t].get(), stream);
          synchronize(stream);
          failure = batch.check(RowOp::kSoftmax, every_row);
          if (!failure.empty()) failure = "replayed: " + failure;
        }
      } catch (const std::exception& error) {
        failure = std::string("threw ") + error.what();
      }
      if (!failure.empty()) failure = "stream " + std::to_string(t) + " " + describe(lanes[t].layout) + ": " + failure;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const std::string& failure : failures)
    if (!failure.empty()) FAIL_CHECK(failure);
}
