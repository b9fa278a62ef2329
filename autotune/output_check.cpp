// SPDX-License-Identifier: Apache-2.0
#include "autotune/output_check.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "autotune/scratch_rows.h"
#include "runtime/parallel_for.h"

namespace kjit {

Tolerance tolerance_for(DType out) {
  if (out == DType::kF32) return {2e-5f, 2e-6f};
  return {out == DType::kBF16 ? 1.0f / 64 : 1.0f / 512, 1e-6f};
}

std::string mismatch_message(std::size_t element, float got, float reference) {
  return "wrong: element " + std::to_string(element) + " is " + std::to_string(got) +
         ", the reference kernel gives " + std::to_string(reference);
}

namespace {

bool agree(float got, float ref, Tolerance tol) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) && std::isnan(ref);
  return std::fabs(got - ref) <= tol.absolute + tol.relative * std::fabs(ref);
}

/// The largest |value| of the row of `row_elements` that holds element i (0 without rows).
float row_magnitude(const unsigned char* ref, DType out, std::size_t row_elements, std::size_t i) {
  if (row_elements == 0) return 0.0f;
  const std::size_t size = size_of(out), first = i / row_elements * row_elements;
  float largest = 0.0f;
  for (std::size_t j = first; j < first + row_elements; ++j) {
    const float value = std::fabs(decode_float(ref + j * size, out));
    if (!std::isnan(value)) largest = std::max(largest, value);
  }
  return largest;
}

/// The first element of [begin, end) where the outputs disagree, or `end`; with rows
/// (row_elements > 0), each row's largest |reference| widens its elements' absolute tolerance
/// (compare_output_rows). `ref` holds every row whole.
std::size_t first_mismatch(const unsigned char* got, const unsigned char* ref, DType out,
                           std::size_t row_elements, std::size_t begin, std::size_t end) {
  const std::size_t size = size_of(out);
  const Tolerance base = tolerance_for(out);
  std::size_t measured_row = SIZE_MAX;  // the row whose magnitude `magnitude` holds
  float magnitude = 0.0f;
  for (std::size_t i = begin; i < end; ++i) {
    if (std::equal(got + i * size, got + (i + 1) * size, ref + i * size)) continue;  // the common case
    const std::size_t row = row_elements == 0 ? 0 : i / row_elements;
    if (row != measured_row) magnitude = row_magnitude(ref, out, row_elements, i), measured_row = row;
    Tolerance tol = base;
    tol.absolute += base.relative * magnitude;
    if (!agree(decode_float(got + i * size, out), decode_float(ref + i * size, out), tol)) return i;
  }
  return end;
}

std::string compare(const std::vector<unsigned char>& got, const std::vector<unsigned char>& reference, DType out,
                    std::size_t row_elements) {
  const std::size_t elements = reference.size() / size_of(out);
  if (got.size() != reference.size()) return "wrong: the output has the wrong size";
  // One index per chunk: an index per element would cost an atomic per element.
  const int threads = std::min(hardware_threads(), 16);
  const std::size_t chunk = (elements + threads - 1) / static_cast<std::size_t>(threads);
  std::atomic<std::size_t> first{elements};
  parallel_for(static_cast<std::size_t>(threads), threads, [&](std::size_t t) {
    const std::size_t begin = std::min(elements, t * chunk), end = std::min(elements, begin + chunk);
    const std::size_t bad = first_mismatch(got.data(), reference.data(), out, row_elements, begin, end);
    if (bad == end) return;  // this chunk agrees
    std::size_t seen = first.load();
    while (bad < seen && !first.compare_exchange_weak(seen, bad)) {
    }
  });
  if (first == elements) return {};
  const std::size_t size = size_of(out);
  return mismatch_message(first.load(), decode_float(&got[first * size], out),
                          decode_float(&reference[first * size], out));
}

}  // namespace

std::string compare_outputs(const std::vector<unsigned char>& got,
                            const std::vector<unsigned char>& reference, DType out) {
  return compare(got, reference, out, 0);
}

std::string compare_output_rows(const std::vector<unsigned char>& got, const std::vector<unsigned char>& reference,
                                DType out, std::size_t row_elements) {
  return compare(got, reference, out, row_elements);
}

}  // namespace kjit
