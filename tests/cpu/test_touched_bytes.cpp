// SPDX-License-Identifier: Apache-2.0
// Overlap by the bytes a strided batch touches (runtime/ops/argument_checks.h), checked against
// a byte-by-byte reference on every small layout, and on layouts too large to enumerate.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>

#include "kjit/types.hpp"
#include "runtime/ops/argument_checks.h"

using namespace kjit;

namespace {

std::set<std::uint64_t> bytes_of(const TouchedRows& t) {
  std::set<std::uint64_t> bytes;
  for (std::int64_t r = 0; r < t.rows; ++r)
    for (std::uint64_t b = 0; b < t.row_bytes; ++b) bytes.insert(t.base + r * t.stride_bytes + b);
  return bytes;
}

bool share_a_byte(const TouchedRows& a, const TouchedRows& b) {
  const std::set<std::uint64_t> first = bytes_of(a);
  for (std::uint64_t byte : bytes_of(b))
    if (first.count(byte)) return true;
  return false;
}

TouchedRows random_rows(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TouchedRows t;
  t.base = static_cast<std::uintptr_t>(pick(0, 160));
  t.rows = pick(0, 6);
  t.row_bytes = static_cast<std::uint64_t>(pick(1, 24));
  t.stride_bytes = t.row_bytes + static_cast<std::uint64_t>(pick(0, 3) == 0 ? 0 : pick(0, 30));
  return t;
}

}  // namespace

TEST_CASE("touch_same_bytes agrees with a byte-by-byte reference") {
  std::mt19937 rng(40);
  for (int i = 0; i < 20000; ++i) {
    const TouchedRows a = random_rows(rng);
    TouchedRows b = random_rows(rng);
    if (i % 3 == 0) b.stride_bytes = a.stride_bytes;  // the equal-stride path, often
    CAPTURE(i);
    CAPTURE(a.base); CAPTURE(a.rows); CAPTURE(a.row_bytes); CAPTURE(a.stride_bytes);
    CAPTURE(b.base); CAPTURE(b.rows); CAPTURE(b.row_bytes); CAPTURE(b.stride_bytes);
    REQUIRE(touch_same_bytes(a, b) == share_a_byte(a, b));
    REQUIRE(touch_same_bytes(b, a) == share_a_byte(a, b));
  }
}

TEST_CASE("interleaved slices of the largest batches are told apart at once") {
  // x of shape [kMaxRows, 2, 1024] f32: x[:, 0, :] and x[:, 1, :] share a span but no byte.
  const std::int64_t cols = 1024;
  const TouchedRows first = touched_rows(reinterpret_cast<void*>(std::uintptr_t{1} << 20), kMaxRows,
                                         cols, 2 * cols, 4);
  TouchedRows second = first;
  second.base += cols * 4;
  CHECK_FALSE(touch_same_bytes(first, second));
  second.base -= 4;  // one element closer: every row pair shares a float
  CHECK(touch_same_bytes(first, second));
  // An output of [rows, k] placed in the last gap, and one a byte into the last row.
  const std::uintptr_t last_row = first.base + (kMaxRows - 1) * first.stride_bytes;
  CHECK_FALSE(touch_same_bytes(first, touched_span(reinterpret_cast<void*>(last_row + cols * 4), cols, 4)));
  CHECK(touch_same_bytes(first, touched_span(reinterpret_cast<void*>(last_row + 1), 1, 1)));
}

TEST_CASE("different strides over very many rows are taken to overlap without proof") {
  const TouchedRows a = touched_rows(nullptr, kMaxRows, 100, 300, 1);
  TouchedRows b = touched_rows(nullptr, kMaxRows, 100, 301, 1);
  b.base = 100;
  CHECK(touch_same_bytes(a, b));  // documented: more than 2^20 rows to compare
}
