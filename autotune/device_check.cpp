// SPDX-License-Identifier: Apache-2.0
#include "autotune/device_check.h"

#include "autotune/output_check.h"
#include "autotune/scratch_rows.h"
#include "kernel_sources/compare_params.cuh"
#include "kjit/error.hpp"
#include "runtime/launch/cubin_store.h"

namespace kjit {
namespace {

constexpr unsigned long long kNoneBad = ~0ull;

const char* element_type(DType out) {
  switch (out) {
    case DType::kF32: return "float";
    case DType::kF16: return "kjit::f16";
    case DType::kBF16: return "kjit::bf16";
    default: break;
  }
  throw Error(Status::kErrorInvalidArgument, "the output check compares float outputs only");
}

/// One store for the process, in memory only: the kernel is small, compiles once (beside the
/// first tuning's candidates), and must not depend on where (or whether) the caller keeps a
/// disk cache.
CubinStore& check_cubins() {
  static CubinStore store([] {
    RuntimeOptions options;
    options.disk_cache = false;
    options.cache_bundle.clear();
    return options;
  }());
  return store;
}

}  // namespace

DeviceOutputCheck::DeviceOutputCheck(DType out, const DeviceProps& device)
    : out_(out), grid_(device.sm_count * 8), first_bad_(allocate_device(sizeof(unsigned long long))) {
  const KernelSpec spec{"output_compare.cuh",
                        std::string("kjit::compare_outputs<") + element_type(out) + ">"};
  LaunchShape shape;
  shape.block = 256;
  kernel_ = Launchable{load_kernel(check_cubins().get(spec, device.arch), shape), shape, nullptr};
}

DeviceOutputCheck::~DeviceOutputCheck() = default;

std::string DeviceOutputCheck::compare(CUdeviceptr got, CUdeviceptr reference,
                                       std::size_t elements, CUstream stream) const {
  const Tolerance tolerance = tolerance_for(out_);
  CompareParams params{reinterpret_cast<const void*>(got), reinterpret_cast<const void*>(reference),
                       static_cast<long long>(elements), tolerance.relative, tolerance.absolute,
                       reinterpret_cast<unsigned long long*>(first_bad_.get())};
  KJIT_CU(cuMemsetD32Async, first_bad_.get(), 0xffffffffu, 2, stream);
  kernel_.launch_blocks(&params, static_cast<unsigned>(grid_), stream, false);
  KJIT_CU(cuStreamSynchronize, stream);
  unsigned long long first_bad = kNoneBad;
  KJIT_CU(cuMemcpyDtoH, &first_bad, first_bad_.get(), sizeof(first_bad));
  if (first_bad == kNoneBad) return {};
  const std::size_t size = size_of(out_);
  unsigned char got_bytes[4] = {}, reference_bytes[4] = {};
  KJIT_CU(cuMemcpyDtoH, got_bytes, got + first_bad * size, size);
  KJIT_CU(cuMemcpyDtoH, reference_bytes, reference + first_bad * size, size);
  return mismatch_message(first_bad, decode_float(got_bytes, out_),
                          decode_float(reference_bytes, out_));
}

}  // namespace kjit
