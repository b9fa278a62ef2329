// SPDX-License-Identifier: Apache-2.0
// The tuner's check of a candidate's output against the reference kernel's, on the device, so
// that checking a large output costs a pass over it instead of a download. Same rule as the
// host check (autotune/output_check): equal bits, or both NaN, or within the tolerance.
#pragma once

#include "compare_params.cuh"
#include "grid_dependency.cuh"
#include "numeric.cuh"

namespace kjit {

__device__ __forceinline__ unsigned bits_of(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned bits_of(f16 x) { return x.bits; }
__device__ __forceinline__ unsigned bits_of(bf16 x) { return x.bits; }

template <typename T>
__global__ void compare_outputs(const CompareParams p) {
  start_after_prior_grids();
  const T* const got = static_cast<const T*>(p.got);
  const T* const reference = static_cast<const T*>(p.reference);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.elements; i += stride) {
    if (bits_of(got[i]) == bits_of(reference[i])) continue;  // the common case
    const float g = to_float(got[i]), r = to_float(reference[i]);
    const bool nan_g = g != g, nan_r = r != r;
    const bool agree = (nan_g || nan_r) ? (nan_g && nan_r)
                                        : fabsf(g - r) <= p.absolute + p.relative * fabsf(r);
    if (!agree) atomicMin(p.first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace kjit
