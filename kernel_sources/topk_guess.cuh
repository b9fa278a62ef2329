// SPDX-License-Identifier: Apache-2.0
// The top-K stream kernel's guessed admission threshold (k buckets from 512): a sample of the
// slice's first tile, and the key a select picks from it.
#pragma once

#include "pack.cuh"
#include "topk_block_state.cuh"
#include "topk_select.cuh"
#include "topk_tiles.cuh"

namespace kjit {

/// Buckets from 512 guess their threshold from a sample (guess_threshold). At k = 256 the seed
/// from the threads' maxima already holds the admissions down, and the guess cost more than it
/// saved.
template <int KBucket>
__device__ __forceinline__ constexpr bool guesses_threshold() {
  return KBucket >= 512;
}

/// How many of a sample's best keys to admit above so that a slice whose values lie in no
/// particular order holds k_row or more keys above the threshold, all but certainly: the sample
/// of `sampled` of the slice's `cols` values expects q = k_row x sampled / cols of the slice's
/// best k_row among its own, and the slice's keys above the sample's r-th best number about
/// r / q x k_row, give or take sqrt(r) / q x k_row; r = q + 5 sqrt(r) puts k_row five of those
/// below the expectation (one slice in millions guesses too high).
__device__ __forceinline__ int guess_rank(int k_row, int sampled, int cols) {
  constexpr float kDeviations = 5.0f;
  const float q =
      static_cast<float>(k_row) * static_cast<float>(sampled) / static_cast<float>(cols);
  const float root = 0.5f * (kDeviations + sqrtf(kDeviations * kDeviations + 4.0f * q));
  return static_cast<int>(ceilf(root * root));
}

/// The most keys the guess samples: of a larger first tile, every other run or fewer. A select
/// over a whole tile's 8192 keys cost more than a guess from half of them, which is as good;
/// from 2048 the guess let in too many keys (docs/experiments/top-k-stream.md).
constexpr int kMostGuessSamples = 4096;

/// Runs of the first tile the guess samples, spread evenly over the tile's Unroll runs.
template <typename Tiles>
__host__ __device__ constexpr int guess_runs() {
  int runs = Tiles::kUnroll;
  while (runs > 1 && runs * Tiles::kRun > kMostGuessSamples) runs /= 2;
  return runs;
}

/// Loads the sampled runs of the first tile into keys[0, runs x kRun) as keys (0 past the
/// slice's end); returns how many of them are the slice's.
template <typename In, typename Tiles>
__device__ __forceinline__ int load_guess_sample(const In* row, const Tiles& slice,
                                                 TopkKey* keys) {
  constexpr int kRuns = guess_runs<Tiles>(), kStride = Tiles::kUnroll / kRuns;
  int sampled = 0;
#pragma unroll
  for (int j = 0; j < kRuns; ++j) {
    const int u = j * kStride;
    float values[Tiles::kPack];
    load_slice_pack<In, Tiles, Tiles::kPack>(row, slice, slice.col(0, u, 0), values);
#pragma unroll
    for (int i = 0; i < Tiles::kPack; ++i) {
      const int col = slice.col(0, u, i);
      keys[(j * Tiles::kThreads + static_cast<int>(threadIdx.x)) * Tiles::kPack + i] =
          slice.holds(col) ? make_key(values[i], col) : 0;
    }
    // The run's columns in the slice: from its first (or the slice's) to its last (or the end).
    const int first = slice.col(0, u, 0) - static_cast<int>(threadIdx.x) * Tiles::kPack;
    const int from = first > slice.begin ? first : slice.begin;
    const int to = first + Tiles::kRun < slice.end ? first + Tiles::kRun : slice.end;
    sampled += to > from ? to - from : 0;
  }
  return sampled;
}

/// Buckets from 512 guess the admission threshold from the first tile (or the part of it that
/// load_guess_sample reads), a sample of the slice: its guess_rank-th best key. A threshold that
/// starts from nothing and rises with each compaction let ~14,000 keys of a row of 128256 into
/// the buffer at k = 1024 (two or three compactions); the guess lets in about 1.3 k_row. It may
/// be too high (a slice whose best values all lie in the first tile): scan_slice finds that at
/// the slice's end, by fewer than k_row keys in the buffer, and reads the slice again the safe
/// way. The sample is read here straight into shared memory and again (from L2) by the
/// streaming loop: held in registers across the select, the tile made the loop spill. False
/// where the sample is too small to guess from. Called with an empty buffer, which it leaves
/// empty.
template <typename In, typename Tiles>
__device__ bool guess_threshold(const In* row, const Tiles& slice, int k_row, TopkKey* keys,
                                TopkBlockState& state) {
  const int sampled = load_guess_sample(row, slice, keys);
  __syncthreads();
  const int rank = sampled == 0 ? 0 : guess_rank(k_row, sampled, slice.end - slice.begin);
  if (rank == 0 || rank > sampled) return false;  // the same in every thread
  const TopkKey bound = radix_threshold<Tiles::kThreads>(
      keys, guess_runs<Tiles>() * Tiles::kRun, rank, rank + rank / 4, state.select);
  if (threadIdx.x == 0) state.threshold = bound - 1;  // admits the bound itself
  __syncthreads();
  return true;
}

}  // namespace kjit
