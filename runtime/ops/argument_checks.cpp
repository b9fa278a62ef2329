// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/argument_checks.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kjit/error.hpp"
#include "kjit/types.hpp"

namespace kjit {
namespace {

// Addresses and offsets in 128 bits: a base near the top of the address space plus a span of
// up to 2^63 bytes must neither wrap nor change sign.
using Wide = __int128;

constexpr std::int64_t kMaxRowsCompared = std::int64_t{1} << 20;

Wide floor_div(Wide a, Wide b) {  // b > 0
  const Wide q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// A contiguous batch (or a single row) is one row of all its bytes.
TouchedRows normalized(TouchedRows t) {
  if (t.stride_bytes == 0 && t.rows > 1) t.rows = 1;  // every row is the same bytes
  if (t.rows > 1 && t.stride_bytes == t.row_bytes) {
    t.row_bytes *= static_cast<std::uint64_t>(t.rows);
    t.rows = 1;
  }
  if (t.rows == 1) t.stride_bytes = t.row_bytes;
  return t;
}

Wide span_end(const TouchedRows& t) {
  return Wide(t.base) + Wide(t.rows - 1) * Wide(t.stride_bytes) + Wide(t.row_bytes);
}

/// Does [begin, begin + length) meet a row of `t`? O(1): only the first row of `t` ending
/// past `begin` can.
bool meets_a_row(Wide begin, Wide length, const TouchedRows& t) {
  const Wide stride = Wide(t.stride_bytes);
  Wide q = floor_div(begin - Wide(t.row_bytes) - Wide(t.base), stride) + 1;
  q = std::max<Wide>(q, 0);
  return q < Wide(t.rows) && Wide(t.base) + q * stride < begin + length;
}

/// Equal strides: rows r of `a` and q of `b` meet iff d - a.row < (r - q) * s < d + b.row, where
/// d = b.base - a.base; so one look at the smallest r - q above the lower bound decides.
bool meet_equal_strides(const TouchedRows& a, const TouchedRows& b) {
  const Wide s = Wide(a.stride_bytes);
  const Wide d = Wide(b.base) - Wide(a.base);
  Wide m = floor_div(d - Wide(a.row_bytes), s) + 1;
  m = std::max<Wide>(m, -Wide(b.rows - 1));
  return m <= Wide(a.rows - 1) && m * s < d + Wide(b.row_bytes);
}

}  // namespace

TouchedRows touched_rows(const void* base, std::int64_t rows, std::int64_t cols,
                         std::int64_t stride, int element_bytes) noexcept {
  const auto size = static_cast<std::uint64_t>(element_bytes);
  return {reinterpret_cast<std::uintptr_t>(base), static_cast<std::uint64_t>(cols) * size,
          static_cast<std::uint64_t>(stride) * size, rows};
}

TouchedRows touched_span(const void* base, std::int64_t elements, int element_bytes) noexcept {
  return touched_rows(base, 1, elements, elements, element_bytes);
}

bool touch_same_bytes(const TouchedRows& first, const TouchedRows& second) noexcept {
  TouchedRows a = normalized(first), b = normalized(second);
  if (a.rows <= 0 || b.rows <= 0 || a.row_bytes == 0 || b.row_bytes == 0) return false;
  if (span_end(a) <= Wide(b.base) || span_end(b) <= Wide(a.base)) return false;
  if (a.stride_bytes == b.stride_bytes) return meet_equal_strides(a, b);
  // Different strides: walk the rows of the batch with fewer of them inside the other's span.
  if (a.rows > b.rows) std::swap(a, b);
  const Wide stride = Wide(a.stride_bytes);
  const Wide first_row = std::max<Wide>(0, floor_div(Wide(b.base) - Wide(a.row_bytes) - Wide(a.base), stride));
  const Wide last_row = std::min<Wide>(Wide(a.rows - 1), floor_div(span_end(b) - Wide(a.base), stride));
  if (last_row - first_row >= kMaxRowsCompared) return true;
  for (Wide r = first_row; r <= last_row; ++r)
    if (meets_a_row(Wide(a.base) + r * stride, Wide(a.row_bytes), b)) return true;
  return false;
}

void require_aligned(const char* name, const void* pointer, int element_bytes) {
  if (reinterpret_cast<std::uintptr_t>(pointer) % static_cast<std::uintptr_t>(element_bytes) != 0)
    throw Error(Status::kErrorInvalidArgument,
                std::string(name) + " is not aligned to its element size (" +
                    std::to_string(element_bytes) + " bytes)");
}

void require_addressable(const char* name, const TouchedRows& t) {
  if (t.rows <= 0) return;
  if (span_end(t) > Wide(std::numeric_limits<std::uintptr_t>::max()) + 1)
    throw Error(Status::kErrorInvalidArgument,
                std::string(name) + ": its rows run past the end of the address space");
}

void require_rows(std::int64_t rows) {
  if (rows < 0 || rows > kMaxRows)
    throw Error(Status::kErrorInvalidArgument, "rows must be in 0..2^40 (kMaxRows; got " +
                                                   std::to_string(rows) + ")");
}

}  // namespace kjit
