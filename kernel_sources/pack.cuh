// SPDX-License-Identifier: Apache-2.0
// Vector loads and stores of up to 16 bytes, with a scalar tail for the last partial pack.
#pragma once

#include "numeric.cuh"

namespace kjit {

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

/// Loads N elements starting at column `col` of a row of `cols` as floats. Columns past the end
/// read as `fill`. `row` must be aligned to sizeof(T)*N whenever col + N <= cols.
template <typename T, int N>
__device__ __forceinline__ void load_pack(const T* row, int col, int cols, float fill, float* dst) {
  if (col + N <= cols) {
    Pack<T, N> p = *reinterpret_cast<const Pack<T, N>*>(row + col);
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = to_float(p.v[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = col + i < cols ? to_float(row[col + i]) : fill;
  }
}

/// Stores N floats converted to T at column `col`; columns past `cols` are not written.
template <typename T, int N>
__device__ __forceinline__ void store_pack(T* row, int col, int cols, const float* src) {
  if (col + N <= cols) {
    Pack<T, N> p;
#pragma unroll
    for (int i = 0; i < N; ++i) p.v[i] = from_float<T>(src[i]);
    *reinterpret_cast<Pack<T, N>*>(row + col) = p;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (col + i < cols) row[col + i] = from_float<T>(src[i]);
  }
}

}  // namespace kjit
