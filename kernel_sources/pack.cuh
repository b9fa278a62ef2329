// SPDX-License-Identifier: Apache-2.0
// Vector loads and stores of up to 16 bytes, with a scalar tail for the last partial pack.
#pragma once

#include "numeric.cuh"

namespace kjit {

template <typename T, int N>
struct alignas(sizeof(T) * N) PackOf {
  T v[N];
};

/// The bits of a pack of 2, 4, 8 or 16 bytes, as the registers a vector access moves.
template <typename T, int N>
union PackBits {
  static constexpr int kBytes = static_cast<int>(sizeof(PackOf<T, N>));
  static_assert(kBytes == 2 || kBytes == 4 || kBytes == 8 || kBytes == 16, "PackBits: 2..16 bytes");
  PackOf<T, N> pack;
  unsigned words[kBytes >= 4 ? kBytes / 4 : 1];
  unsigned short half;
};

/// N floats converted to T, as the 32-bit words of their pack (16-bit values two to a word, the
/// lower column in the lower half). N * sizeof(T) is 4, 8 or 16.
template <typename T, int N>
__device__ __forceinline__ void pack_words(const float* src, unsigned* words) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i) words[i] = __float_as_uint(src[i]);
  } else {
    static_assert(sizeof(T) == 2 && N % 2 == 0, "pack_words: 4-byte values or pairs of 2-byte ones");
#pragma unroll
    for (int w = 0; w < N / 2; ++w) words[w] = pair_from_floats<T>(src[2 * w], src[2 * w + 1]);
  }
}

/// Stores a pack of N values of T, as its 32-bit words, into global memory with one vector store
/// instruction: a copy of the pack itself the compiler may split into one store a value.
template <typename T, int N>
__device__ __forceinline__ void store_word_bits(T* dst, const unsigned* words) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T));
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "store_word_bits: 4, 8 or 16 bytes");
  if constexpr (kBytes == 16)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                 ::"l"(dst), "r"(words[0]), "r"(words[1]), "r"(words[2]), "r"(words[3]) : "memory");
  else if constexpr (kBytes == 8)
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(dst), "r"(words[0]), "r"(words[1]) : "memory");
  else
    asm volatile("st.global.u32 [%0], %1;" ::"l"(dst), "r"(words[0]) : "memory");
}

/// Stores N floats converted to T into global memory with one vector store instruction, whatever
/// the compiler would have made of the pack (see store_pack_words).
template <typename T, int N>
__device__ __forceinline__ void store_words(T* dst, const float* src) {
  unsigned words[N * sizeof(T) / 4];
  pack_words<T, N>(src, words);
  store_word_bits<T, N>(dst, words);
}

/// Loads N elements starting at column `col` of a row of `cols` as floats. Columns past the end
/// read as `fill`. `row` must be aligned to sizeof(T)*N whenever col + N <= cols.
template <typename T, int N>
__device__ __forceinline__ void load_pack(const T* row, int col, int cols, float fill, float* dst) {
  if (col + N <= cols) {
    PackOf<T, N> p = *reinterpret_cast<const PackOf<T, N>*>(row + col);
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = to_float(p.v[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = col + i < cols ? to_float(row[col + i]) : fill;
  }
}

/// Loads Count packs of N elements of T, pack u at column col_of(u) (increasing in u) of a row of
/// `cols`, through load(u, col, cols) (a load_pack-like call that checks col + N <= cols). For
/// 16-bit T, packs wholly inside the row take one bounds check, so every load is in flight
/// before the first value is widened: checked pack by pack, each widening sat inside its own
/// branch and waited on its load before the next went out. fp32 values need no widening, and
/// there the second copy of the loop only cost time (docs/experiments/memory-access.md).
template <typename T, int N, int Count, typename ColumnOf, typename Load>
__device__ __forceinline__ void load_packs(ColumnOf col_of, int cols, Load load) {
  if (sizeof(T) == 2 && col_of(Count - 1) + N <= cols) {
#pragma unroll
    for (int u = 0; u < Count; ++u) {
      const int col = col_of(u);
      load(u, col, col + N);  // the bounds check folds away
    }
  } else {
#pragma unroll
    for (int u = 0; u < Count; ++u) load(u, col_of(u), cols);
  }
}

/// The N elements at column `col` of a row of `cols` as stored, for copies into shared memory
/// without a round trip through floats. Columns past the end hold `fill`.
template <typename T, int N>
__device__ __forceinline__ PackOf<T, N> load_raw_pack(const T* row, int col, int cols, T fill) {
  if (col + N <= cols) return *reinterpret_cast<const PackOf<T, N>*>(row + col);
  PackOf<T, N> p;
#pragma unroll
  for (int i = 0; i < N; ++i) p.v[i] = col + i < cols ? row[col + i] : fill;
  return p;
}

/// N elements as the 32-bit words a vector load fills: 16-bit elements stay two to a register
/// until widened (a pack of one 16-bit element takes the low half of one word).
template <typename T, int N>
struct WordPack {
  static constexpr int kBytes = N * static_cast<int>(sizeof(T));
  static constexpr int kWords = kBytes >= 4 ? kBytes / 4 : 1;
  unsigned w[kWords];

  /// Element i as a float.
  __device__ __forceinline__ float at(int i) const {
    if constexpr (sizeof(T) == 4) {
      return __uint_as_float(w[i]);
    } else {
      const unsigned word = w[i / 2];
      T half;
      half.bits = static_cast<unsigned short>(i % 2 == 0 ? word & 0xffffu : word >> 16);
      return to_float(half);
    }
  }
};

template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> words_of(const PackBits<T, N>& bits) {
  WordPack<T, N> out;
  if constexpr (WordPack<T, N>::kBytes >= 4) {
#pragma unroll
    for (int w = 0; w < WordPack<T, N>::kWords; ++w) out.w[w] = bits.words[w];
  } else {
    out.w[0] = bits.half;
  }
  return out;
}

/// A pack of N copies of `fill`.
template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> filled_words(T fill) {
  PackBits<T, N> bits;
#pragma unroll
  for (int i = 0; i < N; ++i) bits.pack.v[i] = fill;
  return words_of<T, N>(bits);
}

/// The N elements at column `col` of a row of `cols` as the words one vector load fills;
/// columns past the end hold `fill`.
template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> load_word_pack(const T* row, int col, int cols, T fill) {
  constexpr int kBytes = WordPack<T, N>::kBytes;
  if constexpr (kBytes >= 4) {
    if (col + N <= cols) {
      WordPack<T, N> out;
      if constexpr (kBytes == 16) {
        const uint4 q = *reinterpret_cast<const uint4*>(row + col);
        out.w[0] = q.x, out.w[1] = q.y, out.w[2] = q.z, out.w[3] = q.w;
      } else if constexpr (kBytes == 8) {
        const uint2 q = *reinterpret_cast<const uint2*>(row + col);
        out.w[0] = q.x, out.w[1] = q.y;
      } else {
        out.w[0] = *reinterpret_cast<const unsigned*>(row + col);
      }
      return out;
    }
  }
  PackBits<T, N> bits;  // a pack under 4 bytes, or the row's last, partial one
  bits.pack = load_raw_pack<T, N>(row, col, cols, fill);
  return words_of<T, N>(bits);
}

/// Stores N floats converted to T at column `col`; columns past `cols` are not written.
template <typename T, int N>
__device__ __forceinline__ void store_pack(T* row, int col, int cols, const float* src) {
  if (col + N <= cols) {
    if constexpr (sizeof(T) == 2 && N % 2 == 0) {
      PackBits<T, N> bits;
      pack_words<T, N>(src, bits.words);
      *reinterpret_cast<PackOf<T, N>*>(row + col) = bits.pack;
    } else {
      PackOf<T, N> p;
#pragma unroll
      for (int i = 0; i < N; ++i) p.v[i] = from_float<T>(src[i]);
      *reinterpret_cast<PackOf<T, N>*>(row + col) = p;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (col + i < cols) row[col + i] = from_float<T>(src[i]);
  }
}

/// store_pack (global memory only) with the whole pack forced into one vector store: in
/// block_smem's output loop the compiler split packs into 2- or 4-byte stores. Elsewhere it
/// makes the vector stores itself (docs/experiments/memory-access.md#whole-pack-stores).
template <typename T, int N>
__device__ __forceinline__ void store_pack_words(T* row, int col, int cols, const float* src) {
  if constexpr (N * sizeof(T) >= 4) {
    if (col + N <= cols) {
      store_words<T, N>(row + col, src);
      return;
    }
  }
  store_pack<T, N>(row, col, cols, src);  // the tail (or a pack under 4 bytes)
}

}  // namespace kjit
