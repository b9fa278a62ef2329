// SPDX-License-Identifier: Apache-2.0
// The problems the heuristic suites sweep: widths log-spaced over 1..kMaxCols (powers of two,
// their odd neighbours, primes between them, vocabulary widths), every rows bucket, every
// floating-point dtype pair, and how to name one problem in a failure message.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::test {

/// The smallest prime >= n (trial division: the sweep's widths are at most 2^30).
inline std::int64_t next_prime(std::int64_t n) {
  for (;; ++n) {
    bool prime = n >= 2;
    for (std::int64_t d = 2; prime && d * d <= n; ++d) prime = n % d != 0;
    if (prime) return n;
  }
}

/// Widths from 1 to kMaxCols: every power of two, its neighbours 2^e - 1 and 2^e + 1, a prime
/// halfway between it and the next, and the vocabularies of common language models.
inline std::vector<std::int64_t> swept_widths() {
  std::vector<std::int64_t> widths{32000, 50257, 128256, 151936, 200000};
  for (int e = 0; e <= 30; ++e) {
    const std::int64_t p = std::int64_t{1} << e;
    for (std::int64_t cols : {p - 1, p, p + 1, next_prime(p + p / 2)})
      if (cols >= 1 && cols <= kMaxCols) widths.push_back(cols);
  }
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  return widths;
}

/// The rows the dispatcher plans each rows bucket for (its largest row count), buckets 0
/// (one row) to `last_bucket`.
inline std::vector<std::int64_t> swept_bucket_rows(int last_bucket) {
  std::vector<std::int64_t> rows;
  for (int bucket = 0; bucket <= last_bucket; ++bucket) rows.push_back(bucket_rows(bucket));
  return rows;
}

struct DTypePair {
  DType in, out;
};

/// The pairs models use: each dtype to itself, and 16-bit to and from f32.
constexpr DTypePair kCommonDTypePairs[] = {{DType::kF32, DType::kF32},  {DType::kF16, DType::kF16},
                                           {DType::kBF16, DType::kBF16}, {DType::kF32, DType::kBF16},
                                           {DType::kBF16, DType::kF32},  {DType::kF16, DType::kF32}};

/// Every pair of f32, f16 and bf16, same and mixed.
inline std::vector<DTypePair> float_dtype_pairs() {
  std::vector<DTypePair> pairs;
  for (DType in : {DType::kF32, DType::kF16, DType::kBF16})
    for (DType out : {DType::kF32, DType::kF16, DType::kBF16}) pairs.push_back({in, out});
  return pairs;
}

/// Every max_pack that alignment can give a pair: powers of two up to 16 bytes of the wider type.
inline std::vector<int> swept_packs(DType in, DType out) {
  std::vector<int> packs;
  for (int pack = 1; pack * std::max(size_of(in), size_of(out)) <= 16; pack *= 2) packs.push_back(pack);
  return packs;
}

inline std::string describe(const RowwiseProblem& p, const DeviceProps& device) {
  return std::string(to_string(p.op)) + " " + to_string(p.in_dtype) + "->" + to_string(p.out_dtype) +
         " rows=" + std::to_string(p.rows) + " cols=" + std::to_string(p.cols) +
         " max_pack=" + std::to_string(p.max_pack) + " on " + device.name;
}

}  // namespace kjit::test
