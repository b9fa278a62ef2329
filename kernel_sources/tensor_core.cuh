// SPDX-License-Identifier: Apache-2.0
// The warp-level tensor-core product mma.sync.m16n8k16 (16-bit inputs, fp32 accumulators,
// sm_80+) and the ldmatrix loads that feed it from shared memory. Fragment layouts, with
// g = lane / 4 and t = lane % 4:
//   A (16 x 16, row-major), 4 registers of two values: (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)
//   B (16 x 8, "col": stored as 8 rows of 16), 2 registers: (k = 2t, n = g), (k = 2t + 8, n = g)
//   C (16 x 8, fp32), 4 values: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)
// so two adjacent C tiles of a row, rounded to 16 bits, are an A fragment as they stand.
#pragma once

#include "numeric.cuh"

namespace kjit {

template <typename In> __device__ __forceinline__ void mma_16x8x16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);

template <>
__device__ __forceinline__ void mma_16x8x16<f16>(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16x8x16<bf16>(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Four 8x8 matrices of 16-bit values; lane l gives the shared address of row l % 8 of matrix
/// l / 8, and r[j] receives matrix j in the B (or A) fragment layout.
__device__ __forceinline__ void load_matrices(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

/// The same, each matrix transposed: rows stored as k (keys) give B fragments of their columns.
__device__ __forceinline__ void load_matrices_transposed(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

}  // namespace kjit
