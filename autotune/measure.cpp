// SPDX-License-Identifier: Apache-2.0
#include "autotune/measure.h"

#include <algorithm>
#include <vector>

#include "runtime/driver/handles.h"

namespace kjit {
namespace {

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

GraphExec capture(const std::function<void(CUstream, int)>& enqueue, CUstream stream, int count) {
  KJIT_CU(cuStreamBeginCapture, stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  try {
    for (int i = 0; i < count; ++i) enqueue(stream, i);
  } catch (...) {
    CUgraph broken = nullptr;
    cuda().cuStreamEndCapture(stream, &broken);  // leave the stream usable
    if (broken) cuda().cuGraphDestroy(broken);
    throw;
  }
  CUgraph raw = nullptr;
  KJIT_CU(cuStreamEndCapture, stream, &raw);
  Graph graph(raw);
  CUgraphExec exec = nullptr;
  KJIT_CU(cuGraphInstantiateWithFlags, &exec, graph.get(), 0);
  return GraphExec(exec);
}

/// L2's persisting lines back to normal. A GPU without L2 persistence (before sm_80) has none to
/// reset and says so; that is not an error.
void reset_persisting_l2() {
  const CUresult result = cuda().cuCtxResetPersistingL2Cache();
  if (result != CUDA_ERROR_NOT_SUPPORTED) check_cuda(result, "cuCtxResetPersistingL2Cache");
}

/// Milliseconds for one `body()` on `stream`, between two events.
template <typename Body>
float timed(CUstream stream, const Event& start, const Event& stop, Body&& body) {
  KJIT_CU(cuEventRecord, start.get(), stream);
  body();
  KJIT_CU(cuEventRecord, stop.get(), stream);
  KJIT_CU(cuEventSynchronize, stop.get());
  float ms = 0.0f;
  KJIT_CU(cuEventElapsedTime, &ms, start.get(), stop.get());
  return ms;
}

}  // namespace

Timing time_launches(const std::function<void(CUstream, int)>& enqueue, CUstream stream,
                     const TimingOptions& options) {
  const int batch = std::max(1, options.launches_per_sample);
  GraphExec graph;
  if (options.use_graph) {
    enqueue(stream, 0);  // first launch outside capture: loads modules, which capture forbids
    KJIT_CU(cuStreamSynchronize, stream);
    graph = capture(enqueue, stream, batch);
  }
  auto one_sample = [&] {
    if (graph) {
      KJIT_CU(cuGraphLaunch, graph.get(), stream);
    } else {
      for (int i = 0; i < batch; ++i) enqueue(stream, i);
    }
  };
  Event start = create_event(), stop = create_event();
  if (options.reset_persisting_l2) reset_persisting_l2();
  for (int i = 0; i < options.warmup_samples; ++i) timed(stream, start, stop, one_sample);
  std::vector<double> per_launch_us;
  for (int i = 0; i < std::max(1, options.samples); ++i)
    per_launch_us.push_back(1000.0 * timed(stream, start, stop, one_sample) / batch);
  return {percentile(per_launch_us, 0.5), percentile(per_launch_us, 0.2),
          percentile(per_launch_us, 0.8), static_cast<int>(per_launch_us.size())};
}

double measure_copy_bandwidth(CUstream stream, std::size_t bytes) {
  DeviceMemory a = allocate_device(bytes), b = allocate_device(bytes);
  KJIT_CU(cuMemsetD8Async, a.get(), 0x3c, bytes, stream);
  auto copy = [&](CUstream s, int i) {
    // Alternate direction so neither side stays hot in L2.
    if (i % 2 == 0) KJIT_CU(cuMemcpyDtoDAsync, b.get(), a.get(), bytes, s);
    else KJIT_CU(cuMemcpyDtoDAsync, a.get(), b.get(), bytes, s);
  };
  TimingOptions options;
  options.launches_per_sample = 10;
  options.samples = 15;
  const Timing timing = time_launches(copy, stream, options);
  return 2.0 * static_cast<double>(bytes) / (timing.median_us * 1e-6);
}

}  // namespace kjit
