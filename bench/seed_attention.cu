// SPDX-License-Identifier: Apache-2.0
// The attention tile of seed 004, kept as a baseline for kjit_attention: one warp per 16x16
// problem, S = Q K^T with WMMA 16x16x16, softmax row by row through shared memory with lane j on
// column j (lanes 16-31 idle), P cast to 16 bits in shared memory, O = P V with WMMA.
// Compiled at benchmark time (NVRTC, through CuPy or ctypes); D and Dv come as -DSEED_D/-DSEED_DV.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#ifndef SEED_D
#define SEED_D 16
#endif
#ifndef SEED_DV
#define SEED_DV 16
#endif

namespace {

using namespace nvcuda;

constexpr int kTile = 16;  // M = N = 16: one WMMA tile of queries and one of keys
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(SEED_D % kTile == 0 && SEED_D > 0, "D must be a positive multiple of 16 (WMMA k)");
static_assert(SEED_DV % kTile == 0 && SEED_DV > 0, "Dv must be a positive multiple of 16 (WMMA n)");

template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename T>
__device__ unsigned short bits_of(float x);
template <>
__device__ unsigned short bits_of<__half>(float x) { return __half_as_ushort(__float2half_rn(x)); }
template <>
__device__ unsigned short bits_of<__nv_bfloat16>(float x) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

// Two floats as one 32-bit word of 16-bit values, the first at the lower address.
template <typename T>
__device__ unsigned pack_pair(float lo, float hi) {
  return bits_of<T>(lo) | (static_cast<unsigned>(bits_of<T>(hi)) << 16);
}

__device__ float negative_infinity() { return -__int_as_float(0x7f800000); }

__device__ float warp_allreduce_max(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

__device__ float warp_allreduce_sum(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// The seed's softmax: the 16 rows one after another, each a max and a sum over the whole warp,
// of which only the first 16 lanes hold a column. The 1e-6 in the divisor is the seed's; the sum
// is at least 1 (the max term), so it moves a probability by at most 1e-6 of itself.
__device__ void softmax_rows(const float* scores, float* probs, float scale) {
  const int lane = threadIdx.x % kWarp;
  for (int row = 0; row < kTile; ++row) {
    float x = negative_infinity();
    if (lane < kTile) x = scores[row * kTile + lane] * scale;
    const float row_max = warp_allreduce_max(x);
    float e = 0.0f;
    if (lane < kTile) e = __expf(x - row_max);
    const float row_sum = warp_allreduce_sum(e);
    if (lane < kTile) probs[row * kTile + lane] = e / (row_sum + 1e-6f);
  }
}

// One 16x16 fp32 tile from shared memory to 16-bit output columns [0, 16) of o: lane l writes
// row l / 2, columns 8 (l % 2) to 8 (l % 2) + 7 in one 16-byte store (the caller checks alignment).
template <typename T>
__device__ void store_tile(const float* tile, T* o, long long o_row) {
  const int lane = threadIdx.x % kWarp;
  const float* in = tile + (lane / 2) * kTile + (lane % 2) * 8;
  uint4 packed = make_uint4(pack_pair<T>(in[0], in[1]), pack_pair<T>(in[2], in[3]),
                            pack_pair<T>(in[4], in[5]), pack_pair<T>(in[6], in[7]));
  // __stwb is the plain store, spelled so that it stays one 16-byte access: an assignment of
  // the uint4 compiles to four 4-byte stores here.
  __stwb(reinterpret_cast<uint4*>(o + (lane / 2) * o_row + (lane % 2) * 8), packed);
}

template <typename T>
__device__ void attention_tile(const T* q, long long q_row, const T* k, long long k_row,
                               const T* v, long long v_row, T* o, long long o_row, float scale) {
  __shared__ __align__(32) float scores[kTile * kTile];
  __shared__ __align__(32) float probs[kTile * kTile];
  __shared__ __align__(32) T probs_16[kTile * kTile];
  const int lane = threadIdx.x % kWarp;

  // S = Q K^T: K is [N, D] row-major, which is K^T [D, N] column-major.
  wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, T, wmma::row_major> q_frag;
  wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, T, wmma::col_major> k_frag;
  wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc;
  wmma::fill_fragment(acc, 0.0f);
#pragma unroll
  for (int d = 0; d < SEED_D; d += kTile) {
    wmma::load_matrix_sync(q_frag, q + d, static_cast<unsigned>(q_row));
    wmma::load_matrix_sync(k_frag, k + d, static_cast<unsigned>(k_row));
    wmma::mma_sync(acc, q_frag, k_frag, acc);
  }
  wmma::store_matrix_sync(scores, acc, kTile, wmma::mem_row_major);
  __syncwarp();

  softmax_rows(scores, probs, scale);
  __syncwarp();
  for (int i = lane; i < kTile * kTile; i += kWarp) probs_16[i] = from_float<T>(probs[i]);
  __syncwarp();

  // O = P V, one 16-column slice of V at a time; the scores' buffer stages each slice of O.
  wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, T, wmma::row_major> p_frag;
  wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, T, wmma::row_major> v_frag;
  wmma::load_matrix_sync(p_frag, probs_16, kTile);
#pragma unroll
  for (int e = 0; e < SEED_DV; e += kTile) {
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(v_frag, v + e, static_cast<unsigned>(v_row));
    wmma::mma_sync(acc, p_frag, v_frag, acc);
    wmma::store_matrix_sync(scores, acc, kTile, wmma::mem_row_major);
    __syncwarp();
    store_tile(scores, o + e, o_row);
    __syncwarp();
  }
}

}  // namespace

// One block of one warp per (batch, head) problem: blockIdx.x = b * heads + h. Strides in
// elements (batch, head, row); the last dimension is contiguous.
#define SEED_ATTENTION_KERNEL(NAME, T)                                                          \
  extern "C" __global__ void __launch_bounds__(kWarp)                                           \
      NAME(const T* q, const T* k, const T* v, T* o, long long heads, long long q_batch,        \
           long long q_head, long long q_row, long long k_batch, long long k_head,              \
           long long k_row, long long v_batch, long long v_head, long long v_row,               \
           long long o_batch, long long o_head, long long o_row, float scale) {                 \
    const long long b = blockIdx.x / heads, h = blockIdx.x % heads;                             \
    attention_tile<T>(q + b * q_batch + h * q_head, q_row, k + b * k_batch + h * k_head, k_row, \
                      v + b * v_batch + h * v_head, v_row, o + b * o_batch + h * o_head, o_row, \
                      scale);                                                                   \
  }

SEED_ATTENTION_KERNEL(seed_attention_f16, __half)
SEED_ATTENTION_KERNEL(seed_attention_bf16, __nv_bfloat16)
