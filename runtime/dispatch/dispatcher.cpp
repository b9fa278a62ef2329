// SPDX-License-Identifier: Apache-2.0
#include "runtime/dispatch/dispatcher.h"

#include <atomic>
#include <mutex>

#include "kjit/error.hpp"
#include "runtime/compiler/kernel_key.h"

namespace kjit {

int next_family_slot() {
  static std::atomic<int> next{0};
  const int slot = next++;
  if (slot >= ContextState::kMaxFamilies)
    throw Error(Status::kErrorInternal, "more op families than ContextState::kMaxFamilies");
  return slot;
}

Dispatcher::Dispatcher(EnvSettings settings)
    : settings_(std::move(settings)), cubins_(settings_), records_(settings_) {}

bool Dispatcher::capturing(CUstream stream) {
  // Tuning inside a capture would allocate, launch and synchronize inside the caller's graph.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuda().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void Dispatcher::fill_report(const Launchable& launchable, KernelReportBase& report) {
  const CompiledKernel& compiled = *launchable.kernel->compiled;
  report.kernel_key = compiled.key_digest;
  report.name_expression = compiled.spec.name_expression;
  report.arch = arch_name(compiled.arch);
  const ResourceUsage& usage = launchable.kernel->usage;
  report.registers = usage.registers;
  report.spill_bytes = usage.spill_stores + usage.spill_loads;
  report.static_smem = usage.static_smem;
  report.dynamic_smem = launchable.shape.dynamic_smem;
  report.cubin_bytes = compiled.cubin.size();
  report.compile_ms = compiled.compile_ms;
}

ContextState& Dispatcher::state_for(CUcontext context) {
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mutex_);
    for (const auto& state : contexts_)
      if (state->context == context) return *state;
  }
  std::unique_lock<std::shared_mutex> lock(contexts_mutex_);
  for (const auto& state : contexts_)
    if (state->context == context) return *state;
  auto state = std::make_unique<ContextState>();
  state->context = context;
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  state->device = query_device(device);
  contexts_.push_back(std::move(state));
  return *contexts_.back();
}

Launchable Dispatcher::load(ContextState& state, const KernelSpec& spec, LaunchShape shape) {
  const int arch = state.device.arch;
  auto loaded = state.modules.get_or_make(kernel_key_text(spec, arch), [&] {
    return load_kernel(cubins_.get(spec, arch), shape);
  });
  if (loaded->max_active_clusters > 0) shape.max_clusters = loaded->max_active_clusters;
  shape.dependent_launch = settings_.dependent_launch && state.device.dependent_launch;
  return Launchable{std::move(loaded), shape, nullptr};
}

}  // namespace kjit
