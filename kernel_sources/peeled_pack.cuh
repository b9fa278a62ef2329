// SPDX-License-Identifier: Apache-2.0
// Vector loads and stores on a row's own grid (row_peel.cuh): a vector wholly inside the row is
// one aligned access, the head's and tail's vectors go element by element, and no element
// outside the row is read or written.
#pragma once

#include "pack.cuh"
#include "row_peel.cuh"

namespace kjit {

/// Whether column `col` is inside a row of `cols`.
__device__ __forceinline__ bool inside_row(int col, int cols) { return col >= 0 && col < cols; }

/// Loads the vector whose first column is `col` (negative for a head that starts inside it) of a
/// row of `cols` as floats; columns outside the row read as `fill`.
template <typename T, int N>
__device__ __forceinline__ void load_peeled_pack(const T* row, int col, int cols, float fill, float* dst) {
  if (whole_vector(col, N, cols)) {
    load_pack<T, N>(row, col, col + N, fill, dst);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = inside_row(col + i, cols) ? to_float(row[col + i]) : fill;
  }
}

/// The same vector as the words one vector load fills (see load_word_pack).
template <typename T, int N>
__device__ __forceinline__ WordPack<T, N> load_peeled_word_pack(const T* row, int col, int cols, T fill) {
  if (whole_vector(col, N, cols)) return load_word_pack<T, N>(row, col, col + N, fill);
  PackBits<T, N> bits;
#pragma unroll
  for (int i = 0; i < N; ++i) bits.pack.v[i] = inside_row(col + i, cols) ? row[col + i] : fill;
  return words_of<T, N>(bits);
}

/// The same vector as stored, for copies into shared memory (see load_raw_pack).
template <typename T, int N>
__device__ __forceinline__ PackOf<T, N> load_peeled_raw_pack(const T* row, int col, int cols, T fill) {
  if (whole_vector(col, N, cols)) return load_raw_pack<T, N>(row, col, col + N, fill);
  PackOf<T, N> p;
#pragma unroll
  for (int i = 0; i < N; ++i) p.v[i] = inside_row(col + i, cols) ? row[col + i] : fill;
  return p;
}

/// Stores N floats converted to T as the vector whose first column is `col` of a row of `cols`:
/// whole where `on_grid` (the row's output starts at the input's lead, so the vector is aligned
/// here too) and it is inside the row, else element by element, only the columns inside.
template <typename T, int N>
__device__ __forceinline__ void store_peeled_pack(T* row, int col, int cols, const float* src, bool on_grid) {
  if (on_grid && whole_vector(col, N, cols)) {
    store_pack<T, N>(row, col, col + N, src);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (inside_row(col + i, cols)) row[col + i] = from_float<T>(src[i]);
  }
}

/// store_peeled_pack with a whole vector forced into one vector store (see store_pack_words).
template <typename T, int N>
__device__ __forceinline__ void store_peeled_words(T* row, int col, int cols, const float* src, bool on_grid) {
  if constexpr (N * sizeof(T) >= 4) {
    if (on_grid && whole_vector(col, N, cols)) {
      store_words<T, N>(row + col, src);
      return;
    }
  }
  store_peeled_pack<T, N>(row, col, cols, src, on_grid);
}

/// Stores values [from, to) of a pack (as its bits) whose first column is `col`, element by
/// element, only the columns inside the row.
template <typename T, int N>
__device__ __forceinline__ void store_pack_part(T* row, int col, int cols, const PackBits<T, N>& bits, int from,
                                                int to) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (i >= from && i < to && inside_row(col + i, cols)) row[col + i] = bits.pack.v[i];
}

/// store_pack_part out of line (see store_realigned_pack).
template <typename T, int N>
__device__ __noinline__ void store_pack_part_call(T* row, int col, int cols, PackBits<T, N> bits, int from, int to) {
  store_pack_part<T, N>(row, col, cols, bits, from, to);
}

/// Stores a pack (as its bits) as the vector whose first column is `col`, on the row's output
/// grid: one vector store where it is inside the row, else element by element.
template <typename T, int N>
__device__ __forceinline__ void store_peeled_bits(T* row, int col, int cols, const PackBits<T, N>& bits) {
  if (whole_vector(col, N, cols)) {
    if constexpr (PackBits<T, N>::kBytes >= 4) store_word_bits<T, N>(row + col, bits.words);
    else *reinterpret_cast<PackOf<T, N>*>(row + col) = bits.pack;
  } else {
    store_pack_part<T, N>(row, col, cols, bits, 0, N);
  }
}

/// The words of the N values starting `shift` (0..N-1) values into own ++ next, each the words
/// of a pack of T (pack_words): whole words moved by constant steps selected on the shift's
/// bits, then 16-bit values by half a word, so that everything stays in registers.
template <typename T, int N>
__device__ __forceinline__ void shifted_words(const unsigned (&own)[PackBits<T, N>::kBytes / 4],
                                              const unsigned (&next)[PackBits<T, N>::kBytes / 4], int shift,
                                              unsigned (&window)[PackBits<T, N>::kBytes / 4]) {
  constexpr int kWords = PackBits<T, N>::kBytes / 4;
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
  unsigned both[2 * kWords];
#pragma unroll
  for (int w = 0; w < kWords; ++w) both[w] = own[w], both[kWords + w] = next[w];
  const int word_shift = shift / kPerWord;
#pragma unroll
  for (int step = kWords / 2; step >= 1; step /= 2) {
    const bool take = (word_shift & step) != 0;
#pragma unroll
    for (int w = 0; w + step < 2 * kWords; ++w) both[w] = take ? both[w + step] : both[w];
  }
  if constexpr (kPerWord == 2) {
    if (shift & 1) {
#pragma unroll
      for (int w = 0; w + 1 < 2 * kWords; ++w) both[w] = __byte_perm(both[w], both[w + 1], 0x5432);
    }
  }
#pragma unroll
  for (int w = 0; w < kWords; ++w) window[w] = both[w];
}

/// Stores N floats converted to T, a lane's vector whose first column is `col` on the input's
/// grid, on the output's grid `shift` (realign_shift) further on: the output vector at col +
/// shift, completed by the next lane's values (a shuffle within runs of Run lanes, `lanes` the
/// caller's run), and the parts no such vector covers at the run's ends (realigned_store).
/// Every lane of the run calls it; columns outside the row are not written.
template <typename T, int N, int Run>
__device__ __forceinline__ void store_realigned_pack(T* row, int col, int cols, const float* src, int shift,
                                                     RealignedStore part, unsigned lanes) {
  constexpr int kWords = PackBits<T, N>::kBytes / 4;
  PackBits<T, N> own, window;
  pack_words<T, N>(src, own.words);
  unsigned next[kWords];
#pragma unroll
  for (int w = 0; w < kWords; ++w) next[w] = __shfl_down_sync(lanes, own.words[w], 1, Run);
  if (part.head) store_pack_part<T, N>(row, col, cols, own, 0, shift);
  if (part.window) {
    shifted_words<T, N>(own.words, next, shift, window.words);
    store_peeled_bits<T, N>(row, col + shift, cols, window);
  }
  if (part.tail) store_pack_part<T, N>(row, col, cols, own, shift, N);
}

/// Stores the output vector that starts `shift` (realign_shift) into a lane's vector at `col` on
/// the input's grid: the rest of `own` and the start of `next`, the following vector's words. One
/// vector store where it lies inside the row; element by element, out of line, at the row's ends,
/// and, where `first` (the row's first vector), the columns before it.
template <typename T, int N>
__device__ __forceinline__ void store_window(T* row, int col, int cols, const PackBits<T, N>& own,
                                             const unsigned (&next)[PackBits<T, N>::kBytes / 4], int shift,
                                             bool first) {
  PackBits<T, N> window;
  shifted_words<T, N>(own.words, next, shift, window.words);
  const int at = col + shift;
  if (whole_vector(at, N, cols)) store_word_bits<T, N>(row + at, window.words);
  else if (at < cols) store_pack_part_call<T, N>(row, at, cols, window, 0, N);
  if (first) store_pack_part_call<T, N>(row, col, cols, own, 0, shift);
}

/// Loads a thread's share of a peeled row into `held` (a HeldRow): the vector at column
/// first_col + p * col_step for pack p. 16-bit shares wholly inside the row take one check, so
/// their loads go out together (see load_packs).
template <typename Held>
__device__ __forceinline__ void load_peeled_share(Held& held, const typename Held::Input* row, int first_col,
                                                  int col_step, int cols) {
  constexpr int kPack = Held::kPackSize, kPacks = Held::kPacks;
  if (sizeof(typename Held::Input) == 2 && first_col >= 0 && first_col + (kPacks - 1) * col_step + kPack <= cols) {
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = first_col + p * col_step;
      held.load(p, row, col, col + kPack);  // the bounds check folds away
    }
  } else {
#pragma unroll
    for (int p = 0; p < kPacks; ++p) held.load_peeled(p, row, first_col + p * col_step, cols);
  }
}

}  // namespace kjit
