// SPDX-License-Identifier: Apache-2.0
// Loads and stores that tell L2 how long to keep a line (sm_80+ cache policies). A kernel that
// reads its input twice marks the second read and its output "evict first", so the output
// streaming through L2 does not push out input that is still to be read again. Without sm_80
// they are ordinary loads and stores. The loads fill WordPacks: batches held as loaded, 16-bit
// values two to a register, until they are used.
//
// No kernel marks lines "evict last": such lines outlive the kernel, change the caller's L2 (a
// library must not) and made every later kernel and copy faster, so that timings depended on
// what ran before (docs/experiments/l2-state.md).
#pragma once

#include "pack.cuh"
#include "peeled_pack.cuh"

namespace kjit {

typedef unsigned long long L2Policy;

__device__ __forceinline__ L2Policy l2_normal_policy() {
  L2Policy policy = 0;
#if __CUDA_ARCH__ >= 800
  asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}

__device__ __forceinline__ L2Policy l2_stream_policy() {
  L2Policy policy = 0;
#if __CUDA_ARCH__ >= 800
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}

template <typename T, int N>
__device__ __forceinline__ PackOf<T, N> load_with_policy(const PackOf<T, N>* src, L2Policy policy) {
  PackBits<T, N> b;
#if __CUDA_ARCH__ >= 800
  constexpr int kBytes = PackBits<T, N>::kBytes;
  if constexpr (kBytes == 16)
    asm("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(b.words[0]), "=r"(b.words[1]), "=r"(b.words[2]), "=r"(b.words[3])
        : "l"(src), "l"(policy));
  else if constexpr (kBytes == 8)
    asm("ld.global.L1::no_allocate.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
        : "=r"(b.words[0]), "=r"(b.words[1]) : "l"(src), "l"(policy));
  else if constexpr (kBytes == 4)
    asm("ld.global.L1::no_allocate.L2::cache_hint.u32 %0, [%1], %2;"
        : "=r"(b.words[0]) : "l"(src), "l"(policy));
  else
    asm("ld.global.L1::no_allocate.L2::cache_hint.u16 %0, [%1], %2;"
        : "=h"(b.half) : "l"(src), "l"(policy));
#else
  (void)policy;
  b.pack = *src;
#endif
  return b.pack;
}

template <typename T, int N>
__device__ __forceinline__ void store_with_policy(PackOf<T, N>* dst, const PackOf<T, N>& value,
                                                  L2Policy policy) {
  PackBits<T, N> b;
  b.pack = value;
#if __CUDA_ARCH__ >= 800
  constexpr int kBytes = PackBits<T, N>::kBytes;
  if constexpr (kBytes == 16)
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
                 ::"l"(dst), "r"(b.words[0]), "r"(b.words[1]), "r"(b.words[2]), "r"(b.words[3]),
                   "l"(policy) : "memory");
  else if constexpr (kBytes == 8)
    asm volatile("st.global.L2::cache_hint.v2.u32 [%0], {%1, %2}, %3;"
                 ::"l"(dst), "r"(b.words[0]), "r"(b.words[1]), "l"(policy) : "memory");
  else if constexpr (kBytes == 4)
    asm volatile("st.global.L2::cache_hint.u32 [%0], %1, %2;"
                 ::"l"(dst), "r"(b.words[0]), "l"(policy) : "memory");
  else
    asm volatile("st.global.L2::cache_hint.u16 [%0], %1, %2;"
                 ::"l"(dst), "h"(b.half), "l"(policy) : "memory");
#else
  (void)policy;
  *dst = b.pack;
#endif
}

/// The part of a pack that lies before `cols`, element by element; `fill` past it. Out of line:
/// only the last pack of a slice takes it, and inlined into every unrolled load it tripled the
/// kernels' compile time.
template <typename T, int N>
__device__ __noinline__ WordPack<T, N> load_words_tail(const T* row, int col, int cols, T fill) {
  PackBits<T, N> bits;
#pragma unroll
  for (int i = 0; i < N; ++i) bits.pack.v[i] = col + i < cols ? row[col + i] : fill;
  return words_of<T, N>(bits);
}

/// The N elements at column `col` of a row of `cols` as words, with a cache policy on the
/// full-pack path; columns past the end hold `fill`.
template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> load_words_with_policy(const T* row, int col, int cols,
                                                                 T fill, L2Policy policy) {
  if (col + N > cols) return load_words_tail<T, N>(row, col, cols, fill);
  PackBits<T, N> bits;
  bits.pack = load_with_policy(reinterpret_cast<const PackOf<T, N>*>(row + col), policy);
  return words_of<T, N>(bits);
}

/// The part of a peeled row's head or tail vector inside the row (load_peeled_words_with_policy).
template <typename T, int N>
__device__ __noinline__ WordPack<T, N> load_peeled_words_part(const T* row, int col, int cols, T fill) {
  return load_peeled_word_pack<T, N>(row, col, cols, fill);
}

/// The vector whose first column is `col` of a row on its own grid (row_peel.cuh): one load with
/// a cache policy where it lies wholly inside the row, else element by element (out of line, as
/// load_words_tail), columns outside the row holding `fill`.
template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> load_peeled_words_with_policy(const T* row, int col, int cols, T fill,
                                                                        L2Policy policy) {
  if (whole_vector(col, N, cols)) return load_words_with_policy<T, N>(row, col, cols, fill, policy);
  return load_peeled_words_part<T, N>(row, col, cols, fill);
}

/// Stores the part of a pack that lies before `cols` (out of line, as load_words_tail).
template <typename T, int N>
__device__ __noinline__ void store_pack_tail(T* row, int col, int cols, PackOf<T, N> p) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (col + i < cols) row[col + i] = p.v[i];
}

/// store_pack with a cache policy on the full-pack path.
template <typename T, int N>
__device__ __forceinline__ void store_pack_with_policy(T* row, int col, int cols, const float* src,
                                                       L2Policy policy) {
  PackOf<T, N> p;
#pragma unroll
  for (int i = 0; i < N; ++i) p.v[i] = from_float<T>(src[i]);
  if (col + N <= cols) store_with_policy(reinterpret_cast<PackOf<T, N>*>(row + col), p, policy);
  else store_pack_tail<T, N>(row, col, cols, p);
}

/// Stores the part of a peeled row's head or tail vector inside the row (out of line, as
/// store_pack_tail; store_pack_part_call's bounds as arguments cost block_online 4 more bytes of
/// spill at 1024 threads).
template <typename T, int N>
__device__ __noinline__ void store_peeled_part(T* row, int col, int cols, PackOf<T, N> p) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (inside_row(col + i, cols)) row[col + i] = p.v[i];
}

/// Stores N floats converted to T as the vector whose first column is `col`, on the output's
/// own grid: one store with a cache policy where it lies wholly inside the row, else element by
/// element, only the columns inside.
template <typename T, int N>
__device__ __forceinline__ void store_peeled_pack_with_policy(T* row, int col, int cols, const float* src,
                                                              L2Policy policy) {
  if (whole_vector(col, N, cols)) {
    store_pack_with_policy<T, N>(row, col, cols, src, policy);
  } else {
    PackOf<T, N> p;
#pragma unroll
    for (int i = 0; i < N; ++i) p.v[i] = from_float<T>(src[i]);
    store_peeled_part<T, N>(row, col, cols, p);
  }
}

}  // namespace kjit
