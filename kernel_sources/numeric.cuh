// SPDX-License-Identifier: Apache-2.0
// Storage types for fp16/bf16 and their conversions, written here because a deployment machine
// has libnvrtc but not the toolkit's headers.
#pragma once

namespace kjit {

struct f16 { unsigned short bits; };
struct bf16 { unsigned short bits; };

/// Input and output element types of one kernel, as one template argument, and whether its
/// rows are peeled (row_peel.cuh: each row on its own vector grid, for rows off the alignment
/// the pointers and strides give; KernelConfig::peel).
template <typename In, typename Out, bool Peel = false>
struct Io {
  typedef In in;
  typedef Out out;
  static constexpr bool peel = Peel;
};

/// The bits below the top 16 of a value widened to float that values of T can set: 16 for a
/// float, 3 for a half (10 bits of mantissa where the top 16 hold 7), none for a bfloat16.
template <typename T> __host__ __device__ constexpr int low_float_bits();
template <> __host__ __device__ constexpr int low_float_bits<float>() { return 16; }
template <> __host__ __device__ constexpr int low_float_bits<f16>() { return 3; }
template <> __host__ __device__ constexpr int low_float_bits<bf16>() { return 0; }

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(f16 x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ float to_float(bf16 x) {
  return __uint_as_float(static_cast<unsigned>(x.bits) << 16);
}

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ f16 from_float<f16>(float x) {
  f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}
template <> __device__ __forceinline__ bf16 from_float<bf16>(float x) {
  bf16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(x));
  return r;
}

/// Two floats rounded to 16 bits by one instruction (sm_80+), `low` in the lower half: the
/// output loops of 16-bit rows convert half as many times as value by value.
template <typename T> __device__ __forceinline__ unsigned pair_from_floats(float low, float high);
template <> __device__ __forceinline__ unsigned pair_from_floats<f16>(float low, float high) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(high), "f"(low));
  return r;
}
template <> __device__ __forceinline__ unsigned pair_from_floats<bf16>(float low, float high) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(high), "f"(low));
  return r;
}

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ float quiet_nan() { return __int_as_float(0x7fffffff); }
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float largest_float() { return __int_as_float(0x7f7fffff); }

/// x / divisor as a division rounds it, for a divisor shared by many values (a row's max|x|, so
/// |x| <= divisor): the divisor's correctly rounded reciprocal scales x and one fma corrects the
/// quotient (Markstein), four instructions a value where a division takes about thirteen with its
/// own reciprocal, range check and slow path. What depends on the divisor alone (divisor_scale,
/// scaled_reciprocal) is computed once for all its values (RowMath::prepare_divisor). Both
/// operands are first scaled by the power of two that brings the divisor into [1, 2) (exact), which
/// keeps the reciprocal and the residual normal: quotients of 2^-100 or more come out exactly as the
/// division's, smaller ones within one unit in the last place. An infinite divisor gives 0 (x
/// finite) or NaN (x infinite), a NaN one NaN, as the division does.
__device__ __forceinline__ float divisor_scale(float divisor) {
  const int exponent = min(max((__float_as_int(divisor) >> 23) & 0xff, 1), 253);  // biased, divisor >= 0
  return __int_as_float((254 - exponent) << 23);
}

/// The scaled divisor as divide_scaled uses it: inf stands in as the largest float, whose reciprocal
/// (scaled_reciprocal) is taken as zero, so that the residual stays x and the quotient 0.
__device__ __forceinline__ float scaled_divisor(float divisor, float scale) {
  return divisor == pos_inf() ? largest_float() : divisor * scale;
}

/// The scaled divisor's correctly rounded reciprocal; an infinite divisor's is zero.
__device__ __forceinline__ float scaled_reciprocal(float divisor, float scale) {
  return divisor == pos_inf() ? 0.0f : __frcp_rn(divisor * scale);
}

/// x / divisor from the divisor's scale and scaled reciprocal (see divisor_scale).
__device__ __forceinline__ float divide_scaled(float x, float divisor, float scale, float reciprocal) {
  const float divisor_scaled = scaled_divisor(divisor, scale);
  const float scaled = x * scale;
  const float quotient = scaled * reciprocal;
  // The correction can round a tiny quotient's last unit to +0 where the division keeps x's sign.
  return copysignf(fmaf(fmaf(-divisor_scaled, quotient, scaled), reciprocal, quotient), scaled);
}

/// exp(x) through the SFU: ~2 ulp of exp2 plus the rounding of x*log2(e); the inputs here are
/// x - max <= 0, where that error is far below the output tolerance.
__device__ __forceinline__ float fast_exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}

/// 2^x and log2(x) through the SFU (about 2 ulp): for softmax with a temperature folded into
/// the exponent's scale.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float fast_log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// max that returns NaN when either side is NaN (torch's amax semantics).
__device__ __forceinline__ float max_propagate_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

}  // namespace kjit
