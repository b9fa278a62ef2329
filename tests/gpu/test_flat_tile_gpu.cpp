// SPDX-License-Identifier: Apache-2.0
// The flat_tile kernel forced on dense rows and rows of narrow gaps: every row count modulo the
// tile, input and output shifted off the 16-byte boundary each on its own, every gap of each side,
// every op and dtype pair, in place, against the float64 reference; the output poisoned first,
// with guard bytes before and after the tensor, and the gaps between its rows, that must stay
// poisoned (and scales past the last row likewise).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "support/device_buffer.h"
#include "support/reference.h"

using namespace kjit;
using namespace kjit::test;

namespace {

/// Bytes of guard after each tensor (and, with the shift, before it).
constexpr std::size_t kGuardBytes = 64;
constexpr RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};
const DType kPairs[][2] = {{DType::kF32, DType::kF32},   {DType::kF16, DType::kF16},
                           {DType::kBF16, DType::kBF16}, {DType::kBF16, DType::kF32},
                           {DType::kF16, DType::kF32},   {DType::kF32, DType::kBF16}};

/// The lanes a row that the host fits (rowwise::flat_tile_group): four values a lane.
int fitted_group(std::int64_t cols) {
  int group = 1;
  while (group < 32 && group * 4 < cols) group *= 2;
  return group;
}

/// Tensors of up to `max_rows` rows, with guards, for one (width, dtype pair): dense, or with
/// `in_gap` and `out_gap` elements between rows.
class FlatTensors {
 public:
  FlatTensors(DType in, DType out, std::int64_t max_rows, std::int64_t cols, bool in_place, int in_gap = 0,
              int out_gap = 0)
      : in_dtype_(in), out_dtype_(in_place ? in : out), cols_(cols), max_rows_(max_rows),
        in_stride_(cols + in_gap), out_stride_(in_place ? cols + in_gap : cols + out_gap), in_place_(in_place),
        in_(tensor_bytes(in, in_stride_)), out_(in_place ? 0 : tensor_bytes(out_dtype_, out_stride_)),
        scale_(static_cast<std::size_t>(max_rows) * sizeof(float) + kGuardBytes) {}

  /// One call of `op` with `config` over `rows` rows, the input `in_shift` and the output
  /// `out_shift` elements past a 16-byte boundary; empty when all is right, else what is wrong.
  std::string run(Runtime& rt, RowOp op, const KernelConfig& config, std::int64_t rows, int in_shift,
                  int out_shift, CUstream stream) {
    if (in_place_) out_shift = in_shift;
    const int in_size = size_of(in_dtype_), out_size = size_of(out_dtype_);
    const std::size_t in_offset = static_cast<std::size_t>(in_shift) * in_size;
    const std::size_t out_offset = static_cast<std::size_t>(out_shift) * out_size;
    if (in_place_ || in_offset != uploaded_offset_) upload(in_offset);
    DeviceBuffer& out = in_place_ ? in_ : out_;
    if (!in_place_) out.fill_async(kPoisonByte, stream);
    scale_.fill_async(kPoisonByte, stream);
    const RowwiseArgs args{in_.pointer(in_offset), in_stride_, out.pointer(out_offset), out_stride_, rows,
                           cols_,                  in_dtype_,  out_dtype_};
    float* scale = op == RowOp::kReduceScale ? static_cast<float*>(scale_.pointer()) : nullptr;
    try {
      rt.run_with_config(op, args, scale, config, stream);
      synchronize(stream);
    } catch (const Error& error) {
      return std::string("threw ") + error.what();
    }
    return check(op, rows, out.download_all(), out_offset, scale != nullptr);
  }

 private:
  std::size_t tensor_bytes(DType dtype, std::int64_t stride) const {
    return kFlatTileUnitBytes + static_cast<std::size_t>(max_rows_ * stride) * size_of(dtype) + kGuardBytes;
  }

  void upload(std::size_t offset) {
    std::vector<unsigned char> host(in_.bytes(), in_place_ ? kPoisonByte : kInputGapByte);
    const std::size_t pitch_bytes = static_cast<std::size_t>(in_stride_) * size_of(in_dtype_);
    for (std::int64_t row = 0; row < max_rows_; ++row)
      generate_row(in_dtype_, test_seed(), row, cols_, host.data() + offset + row * pitch_bytes);
    in_.upload(host.data(), host.size());
    uploaded_offset_ = in_place_ ? ~std::size_t{0} : offset;
  }

  const std::vector<double>& reference(RowOp op, std::int64_t row, float* scale) {
    auto& cached = references_[{static_cast<int>(op), row}];
    if (cached.first.empty()) {
      const std::vector<double> in = input_row(in_dtype_, test_seed(), row, cols_);
      cached.first.resize(in.size());
      reference_row(op, in.data(), cached.first.data(), cols_, &cached.second);
    }
    *scale = cached.second;
    return cached.first;
  }

  std::string check(RowOp op, std::int64_t rows, const std::vector<unsigned char>& out, std::size_t offset,
                    bool scales) {
    const int size = size_of(out_dtype_);
    const std::size_t pitch = static_cast<std::size_t>(out_stride_) * size;
    const std::size_t row_bytes = static_cast<std::size_t>(cols_) * size;
    const std::size_t end = offset + (rows - 1) * pitch + row_bytes;
    const auto written = [&](std::size_t from, std::size_t to) {
      return std::find_if(out.begin() + from, out.begin() + to, [](unsigned char b) { return b != kPoisonByte; }) !=
             out.begin() + to;
    };
    // In place, the bytes around the tensor hold poison too (upload).
    if (written(0, offset)) return "a byte before the output tensor was written";
    if (written(end, out.size())) return "a byte after the output tensor was written";
    for (std::int64_t row = 0; row + 1 < rows; ++row)
      if (written(offset + row * pitch + row_bytes, offset + (row + 1) * pitch))
        return "a byte of the gap after row " + std::to_string(row) + " was written";
    for (std::int64_t row = 0; row < rows; ++row) {
      float scale = 0;
      const std::vector<double>& ref = reference(op, row, &scale);
      const unsigned char* got = out.data() + offset + row * pitch;
      if (std::string why = compare_row(op, out_dtype_, got, ref.data(), cols_); !why.empty())
        return "row " + std::to_string(row) + " (" + to_string(row_kind(row, cols_)) + ") " + why;
    }
    if (!scales) return {};
    std::vector<unsigned char> raw(scale_.bytes());
    scale_.download(raw.data(), raw.size());
    for (std::int64_t row = 0; row < rows; ++row) {
      float got = 0, want = 0;
      std::copy_n(raw.data() + row * sizeof(float), sizeof(float), reinterpret_cast<unsigned char*>(&got));
      reference(op, row, &want);
      if (std::string why = compare_scale(got, want); !why.empty())
        return "row " + std::to_string(row) + " scale " + why;
    }
    if (std::any_of(raw.begin() + rows * sizeof(float), raw.end(), [](unsigned char b) { return b != kPoisonByte; }))
      return "a scale past the last row was written";
    return {};
  }

  DType in_dtype_, out_dtype_;
  std::int64_t cols_, max_rows_, in_stride_, out_stride_;
  bool in_place_;
  DeviceBuffer in_, out_, scale_;
  std::size_t uploaded_offset_ = ~std::size_t{0};
  std::map<std::pair<int, std::int64_t>, std::pair<std::vector<double>, float>> references_;
};

struct Failures {
  std::vector<std::string> list;
  int calls = 0;

  void add(const std::string& where, const std::string& why) {
    ++calls;
    if (!why.empty()) list.push_back(where + ": " + why);
  }
  void report() const {
    for (std::size_t i = 0; i < list.size() && i < 20; ++i) FAIL_CHECK(list[i]);
    CHECK_MESSAGE(list.empty(), list.size() << " of " << calls << " calls failed (seed " << test_seed() << ")");
    MESSAGE(calls << " flat_tile calls checked");
  }
};

std::string where(RowOp op, DType in, DType out, std::int64_t rows, std::int64_t cols, const KernelConfig& c,
                  int in_shift, int out_shift) {
  return std::string(to_string(op)) + " " + to_string(in) + "->" + to_string(out) + " rows=" +
         std::to_string(rows) + " cols=" + std::to_string(cols) + " " + c.to_string() + " shifts " +
         std::to_string(in_shift) + "/" + std::to_string(out_shift);
}

/// Row counts of every remainder modulo the tile: 1, every count of the second tile (so every
/// remainder follows a whole tile), and three tiles and one row.
std::vector<std::int64_t> every_remainder(int tile_rows) {
  std::vector<std::int64_t> rows = {1};
  for (std::int64_t r = tile_rows; r < 2 * tile_rows; ++r) rows.push_back(r);
  rows.push_back(3 * static_cast<std::int64_t>(tile_rows) + 1);
  return rows;
}

}  // namespace

TEST_CASE("flat_tile at every row count modulo the tile and every shift of each side") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  Failures failures;
  for (std::int64_t cols : {1, 3, 7, 49, 64, 77, 100, 256})
    for (const auto& pair : {std::array<DType, 2>{DType::kF16, DType::kF16},
                             std::array<DType, 2>{DType::kF32, DType::kF32},
                             std::array<DType, 2>{DType::kBF16, DType::kF32}}) {
      const KernelConfig config{Algorithm::kFlatTile, 1, 256, fitted_group(cols), 1};
      const int tile_rows = flat_tile_rows(cols, size_of(pair[0]), config.threads, config.group);
      const std::vector<std::int64_t> counts = every_remainder(tile_rows);
      FlatTensors tensors(pair[0], pair[1], counts.back(), cols, false);
      const int in_shifts = kFlatTileUnitBytes / size_of(pair[0]);
      const int out_shifts = kFlatTileUnitBytes / size_of(pair[1]);
      // Each side's shifts in turn, on their own: the i-th count takes input shift i mod its
      // shifts and an output shift that runs through its own shifts at another pace.
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const int in_shift = static_cast<int>(i % in_shifts);
        const int out_shift = static_cast<int>((i / in_shifts + i) % out_shifts);
        const RowOp op = kOps[i % 3];
        failures.add(where(op, pair[0], pair[1], counts[i], cols, config, in_shift, out_shift),
                     tensors.run(rt, op, config, counts[i], in_shift, out_shift, stream.get()));
      }
    }
  failures.report();
}

TEST_CASE("flat_tile over rows of narrow gaps: every gap of each side, row counts modulo the tile, shifts, in place") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  Failures failures;
  int call = 0;
  // Narrow gaps are narrower than the row as well (a row of one column has none).
  for (std::int64_t cols : {2, 3, 5, 17, 49, 84, 127, 255})
    for (const auto& pair : kPairs) {
      const KernelConfig config{Algorithm::kFlatTile, 1, 256, fitted_group(cols), 1};
      const int tile_rows = flat_tile_rows(cols, size_of(pair[0]), config.threads, config.group, true);
      const int narrower = static_cast<int>(cols) - 1;
      const int in_gaps = std::min(kFlatTileMaxGapBytes / size_of(pair[0]), narrower);
      const int out_gaps = std::min(kFlatTileMaxGapBytes / size_of(pair[1]), narrower);
      // Every gap of each side, the other side's gap at another pace (0 included: one side dense).
      for (int in_gap = 0; in_gap <= in_gaps; ++in_gap) {
        const int out_gap = in_gap == 0 ? 1 + call % out_gaps : (in_gap * 3 + call) % (out_gaps + 1);
        FlatTensors tensors(pair[0], pair[1], 2 * std::int64_t{tile_rows} + 1, cols, false, in_gap, out_gap);
        for (std::int64_t rows : {std::int64_t{1} + call % 3, std::int64_t{tile_rows} + 1 + call % 7,
                                  2 * std::int64_t{tile_rows} + 1}) {
          const int in_shift = call % (kFlatTileUnitBytes / size_of(pair[0]));
          const int out_shift = (call / 2) % (kFlatTileUnitBytes / size_of(pair[1]));
          const RowOp op = kOps[call++ % 3];
          failures.add(where(op, pair[0], pair[1], rows, cols, config, in_shift, out_shift) + " gaps " +
                           std::to_string(in_gap) + "/" + std::to_string(out_gap),
                       tensors.run(rt, op, config, rows, in_shift, out_shift, stream.get()));
        }
      }
    }
  // In place, a stride of one to eight f16 past the width.
  for (int gap : {1, 3, 8}) {
    const KernelConfig config{Algorithm::kFlatTile, 1, 256, fitted_group(49), 1};
    const std::int64_t rows = 2 * flat_tile_rows(49, 2, 256, config.group, true) + 5;
    FlatTensors tensors(DType::kF16, DType::kF16, rows, 49, true, gap);
    for (RowOp op : kOps)
      failures.add(where(op, DType::kF16, DType::kF16, rows, 49, config, 1, 1) + " in place, gap " +
                       std::to_string(gap),
                   tensors.run(rt, op, config, rows, 1, 1, stream.get()));
  }
  failures.report();
}

TEST_CASE("flat_tile for every op and dtype pair at widths up to its limit, every candidate layout") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  Failures failures;
  std::vector<std::int64_t> widths = {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 49, 63, 64, 65,
                                      77, 96, 100, 127, 128, 129, 197, 200, 255, 256};
  // Every width with every candidate layout; the op and dtype pair rotate over those kernels so
  // that each 18 in a row hold every (op, pair) once. A kernel is one compile: the full product
  // (about 1800) takes longer than the suite may.
  std::size_t kernel = 0;
  for (std::int64_t cols : widths) {
    const int group = fitted_group(cols);
    for (int threads : {128, 256})
      for (int g : {group, group / 2}) {
        if (g < 1 || flat_tile_values(cols, g) > kFlatTileMaxValues) continue;
        const KernelConfig config{Algorithm::kFlatTile, 1, threads, g, 1};
        const RowOp op = kOps[kernel % 3];
        const auto& pair = kPairs[(kernel / 3) % 6];
        ++kernel;
        const int tile_rows = flat_tile_rows(cols, size_of(pair[0]), config.threads, config.group);
        FlatTensors tensors(pair[0], pair[1], 2 * static_cast<std::int64_t>(tile_rows) + 3, cols, false);
        const int in_shift = static_cast<int>(cols % (kFlatTileUnitBytes / size_of(pair[0])));
        const int out_shift = static_cast<int>((cols + 1) % (kFlatTileUnitBytes / size_of(pair[1])));
        for (std::int64_t rows : {std::int64_t{tile_rows} - 1, 2 * std::int64_t{tile_rows} + 3}) {
          if (rows < 1) continue;
          failures.add(where(op, pair[0], pair[1], rows, cols, config, in_shift, out_shift),
                       tensors.run(rt, op, config, rows, in_shift, out_shift, stream.get()));
        }
      }
  }
  CHECK(kernel >= 18);
  failures.report();
}

TEST_CASE("flat_tile in place") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  Stream stream = create_stream();
  Failures failures;
  for (std::int64_t cols : {1, 49, 100, 256})
    for (DType dtype : {DType::kF16, DType::kF32}) {
      const KernelConfig config{Algorithm::kFlatTile, 1, 256, fitted_group(cols), 1};
      const std::int64_t rows = 2 * flat_tile_rows(cols, size_of(dtype), 256, config.group) + 5;
      FlatTensors tensors(dtype, dtype, rows, cols, true);
      for (RowOp op : kOps)
        for (int shift : {0, 1, 3})
          failures.add(where(op, dtype, dtype, rows, cols, config, shift, shift),
                       tensors.run(rt, op, config, rows, shift, shift, stream.get()));
    }
  failures.report();
}

TEST_CASE("flat_tile is refused for rows of gaps over 16 bytes and past its width") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  BatchLayout padded{DType::kF16, DType::kF16, 64, 49};
  padded.out_stride = 49 + 9;  // 18 bytes of gap
  RowBatch batch(padded, test_seed());
  try {
    rt.run_with_config(RowOp::kSoftmax, batch.args(), nullptr, KernelConfig{Algorithm::kFlatTile});
    FAIL("flat_tile ran padded rows");
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorInvalidConfig);
    CHECK(std::string(error.what()).find("dense") != std::string::npos);
  }
  RowBatch wide(BatchLayout{DType::kF32, DType::kF32, 8, kFlatTileMaxCols + 1}, test_seed());
  CHECK_THROWS_AS(rt.run_with_config(RowOp::kSoftmax, wide.args(), nullptr, KernelConfig{Algorithm::kFlatTile}),
                  Error);
}
