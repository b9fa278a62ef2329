// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_layout.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kjit/error.hpp"

namespace kjit {
namespace {

using Wide = __int128;

[[noreturn]] void reject(const AttentionTensor& t, const std::string& why) {
  throw Error(Status::kErrorInvalidArgument, std::string(t.name) + ": " + why);
}

const char* stride_name(const AttentionTensor& t, int dim) {
  static const char* const three[] = {"batch stride", "head stride", "row stride"};
  static const char* const two[] = {"head (window) stride", "row stride"};
  return t.dims == 3 ? three[dim] : two[dim];
}

/// The dimensions of more than one entry as (stride, extent), innermost (smallest stride) first.
std::vector<std::pair<std::int64_t, std::int64_t>> used_dims(const AttentionTensor& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;
  for (int i = 0; i < t.dims; ++i)
    if (t.extents[i] > 1) dims.emplace_back(t.strides[i], t.extents[i]);
  std::sort(dims.begin(), dims.end());
  return dims;
}

/// Elements from the first to one past the last touched.
Wide span_elements(const AttentionTensor& t) {
  Wide span = t.row;
  for (int i = 0; i < t.dims; ++i)
    if (t.extents[i] > 1) span += Wide(t.extents[i] - 1) * Wide(t.strides[i]);
  return span;
}

/// The tensor as rows at one stride, when its dimensions nest that way.
bool as_rows(const AttentionTensor& t, TouchedRows& rows) {
  const auto dims = used_dims(t);
  std::int64_t count = 1, stride = t.row;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i == 0) stride = dims[0].first;
    else if (Wide(dims[i].first) != Wide(dims[i - 1].first) * dims[i - 1].second) return false;
    count *= dims[i].second;
  }
  rows = touched_rows(t.base, count, t.row, stride, t.element_bytes);
  return true;
}

}  // namespace

void require_sane_layout(const AttentionTensor& t) {
  for (int i = 0; i < t.dims; ++i) {
    if (t.extents[i] <= 1) continue;
    if (t.strides[i] < 0)
      reject(t, std::string(stride_name(t, i)) + " (" + std::to_string(t.strides[i]) + ") is negative");
  }
  const int row_dim = t.dims - 1;
  if (t.extents[row_dim] > 1 && t.strides[row_dim] < t.row)
    reject(t, "row stride (" + std::to_string(t.strides[row_dim]) + ") is smaller than a row (" +
                  std::to_string(t.row) + " elements)");
  if (span_elements(t) * t.element_bytes > (Wide(1) << 62))
    reject(t, "its strides times its extents overflow");
  require_addressable(t.name, touched_span(t.base, static_cast<std::int64_t>(span_elements(t)), t.element_bytes));
}

void require_stride_multiple(const AttentionTensor& t, std::int64_t elements) {
  for (int i = 0; i < t.dims; ++i)
    if (t.extents[i] > 1 && t.strides[i] % elements != 0)
      reject(t, std::string(stride_name(t, i)) + " (" + std::to_string(t.strides[i]) + ") is not a multiple of " +
                    std::to_string(elements) + " elements (16 bytes), which the kernel's copies need");
}

void require_disjoint_rows(const AttentionTensor& t) {
  Wide inner = t.row;
  for (const auto& [stride, extent] : used_dims(t)) {
    if (Wide(stride) < inner)
      reject(t, "its strides make rows of different problems overlap (each stride must clear the "
                "dimensions inside it)");
    inner = Wide(stride) * (extent - 1) + inner;
  }
}

bool may_overlap(const AttentionTensor& a, const AttentionTensor& b) {
  const Wide a_begin = Wide(reinterpret_cast<std::uintptr_t>(a.base));
  const Wide b_begin = Wide(reinterpret_cast<std::uintptr_t>(b.base));
  if (a_begin + span_elements(a) * a.element_bytes <= b_begin) return false;
  if (b_begin + span_elements(b) * b.element_bytes <= a_begin) return false;
  TouchedRows a_rows, b_rows;
  if (as_rows(a, a_rows) && as_rows(b, b_rows)) return touch_same_bytes(a_rows, b_rows);
  return true;
}

}  // namespace kjit
