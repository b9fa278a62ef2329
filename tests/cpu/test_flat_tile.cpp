// SPDX-License-Identifier: Apache-2.0
// The flat_tile algorithm without a GPU: its span geometry (kernel_sources/flat_tile_layout.cuh)
// covers every element of every row exactly once and touches no byte outside the tensor, for
// every row count modulo the tile and every start shift; validity takes dense rows and rows of
// narrow gaps only; configs read and write as the others do. The pick: test_flat_tile_pick.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kjit/kjit.hpp"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_rules.h"
#include "support/flat_tile_problems.h"

using namespace kjit;

namespace {

using test::dense_problem;
constexpr auto& kPairs = test::kFlatTilePairs;

/// Widths the geometry is checked at: every width up to 64, then odd and even ones to the limit.
std::vector<std::int64_t> geometry_widths() {
  std::vector<std::int64_t> widths;
  for (std::int64_t cols = 1; cols <= 64; ++cols) widths.push_back(cols);
  for (std::int64_t cols : {77, 96, 100, 127, 128, 129, 200, 255, 256}) widths.push_back(cols);
  return widths;
}

/// What one tensor's spans over `rows` rows of `cols`, `pitch` apart, do wrong, or empty, as
/// flat_tile.cuh moves them. Loads: a unit inside the tensor moves whole (gaps and neighbouring
/// rows along), only units holding the tensor's first or last byte element by element; every
/// element of a span lands once in its tile's buffer and no access leaves the tensor. Stores:
/// dense rows by units, whole ones in one access; rows with gaps by words, one access only for a
/// word inside one row; every row element is stored exactly once and no gap element at all.
std::string check_spans(std::int64_t rows, std::int64_t cols, std::int64_t pitch, int elem_bytes, int tile_rows,
                        int threads, unsigned shift_elements) {
  const bool gapped = pitch != cols;
  const unsigned long long base = 4096 + static_cast<unsigned long long>(shift_elements) * elem_bytes;
  const std::int64_t elements = (rows - 1) * pitch + cols;
  const unsigned long long end = base + static_cast<unsigned long long>(elements) * elem_bytes;
  std::vector<unsigned char> stored(static_cast<std::size_t>(elements), 0);
  const int units_per_thread = flat_tile_units_per_thread(cols, elem_bytes, tile_rows, threads, gapped);
  const long long buffer =
      flat_tile_buffer_bytes(tile_rows * flat_tile_pitch_bound(cols, elem_bytes, gapped), elem_bytes);
  const auto in_row = [&](long long at) { return at % pitch < cols; };
  const int per_word = kFlatTileWordBytes / elem_bytes;
  for (long long tile = 0; tile * tile_rows < rows; ++tile) {
    const FlatSpan span = flat_span(tile, tile_rows, rows, cols, pitch, elem_bytes, base);
    const long long span_rows = std::min<long long>(tile_rows, rows - tile * tile_rows);
    if (span.first != tile * tile_rows * pitch || span.elements != (span_rows - 1) * pitch + cols)
      return "span bounds";
    const unsigned long long start = base + static_cast<unsigned long long>(span.first) * elem_bytes;
    if (span.shift != static_cast<int>(start % kFlatTileUnitBytes)) return "shift";
    if (span.units > units_per_thread * threads) return "more units than the threads move";
    if (span.units * kFlatTileUnitBytes > buffer) return "units past the shared buffer";
    if (span.shift + static_cast<long long>(span.elements) * elem_bytes > buffer) return "span past the shared buffer";
    std::vector<int> loaded(static_cast<std::size_t>(span.elements), 0);
    const auto store = [&](long long e) -> std::string {
      if (e < 0 || e >= span.elements) return "a store outside its span";
      const long long at = span.first + e;
      if (!in_row(at)) return "a gap element stored";
      if (++stored[static_cast<std::size_t>(at)] != 1) return "element " + std::to_string(at) + " stored twice";
      if (flat_element_in_row(span, static_cast<int>(e)) != in_row(at)) return "a gap taken for a row or back";
      return {};
    };
    for (int unit = 0; unit < span.units; ++unit) {
      const unsigned long long unit_start =
          start - span.shift + static_cast<unsigned long long>(unit) * kFlatTileUnitBytes;
      if (unit_start % kFlatTileUnitBytes != 0) return "unit not 16-byte aligned";
      const long long first = flat_unit_first(span, unit, elem_bytes), last = flat_unit_end(span, unit, elem_bytes);
      if (first < 0 || last > span.elements || first >= last) return "a unit's element range";
      if (flat_unit_inside(unit_start, base, end)) {
        if (unit_start < base || unit_start + kFlatTileUnitBytes > end) return "a whole unit outside the tensor";
      } else if (unit_start >= base && unit_start + kFlatTileUnitBytes <= end) {
        return "a unit inside the tensor peeled";
      } else if (unit_start > base && unit_start + kFlatTileUnitBytes < end) {
        return "a peeled unit holds neither end of the tensor";
      }
      for (long long e = first; e < last; ++e) ++loaded[static_cast<std::size_t>(e)];
      if (gapped) continue;
      if (flat_unit_whole(span, unit, elem_bytes) &&
          (unit_start < start || unit_start + kFlatTileUnitBytes > start + 1ull * span.elements * elem_bytes))
        return "a unit stored whole past its span";
      for (long long e = first; e < last; ++e)
        if (const std::string why = store(e); !why.empty()) return why;
    }
    if (std::any_of(loaded.begin(), loaded.end(), [](int n) { return n != 1; }))
      return "a span element not loaded exactly once";
    if (!gapped) continue;
    // Each thread's words as the kernel walks them: its column carried along, not divided anew.
    for (int thread = 0; thread < threads; ++thread) {
      int word = flat_first_word(span) + thread;
      int first = flat_word_first(span, word, elem_bytes);
      int col = flat_column(span, first);
      for (; word < flat_end_word(span, elem_bytes); word += threads, first += threads * per_word) {
        if (first >= 0 && col != (span.first + first) % pitch) return "a word's column lost along the walk";
        const bool whole = flat_word_in_row(span, first, col, elem_bytes);
        for (long long e = first; e < first + per_word; ++e)
          if (whole || (e >= 0 && e < span.elements && in_row(span.first + e)))
            if (const std::string why = store(e); !why.empty()) return why;
        col = (col + threads * per_word % pitch) % pitch;
      }
    }
  }
  for (long long at = 0; at < elements; ++at)
    if (in_row(at) && stored[static_cast<std::size_t>(at)] == 0)
      return "element " + std::to_string(at) + " never stored";
  return {};
}

/// What the split of a tile into rows and lanes does wrong, or empty: every row of the tile is
/// one group's in one pass, every column of a row one lane's value.
std::string check_row_split(std::int64_t cols, int tile_rows, int threads, int group) {
  const int rows_per_pass = threads / group;
  if (tile_rows % rows_per_pass != 0) return "tile rows not whole passes";
  if (tile_rows / rows_per_pass > kFlatTileMaxPasses) return "too many passes";
  std::vector<int> taken(static_cast<std::size_t>(cols), 0);
  const int values = flat_tile_values(cols, group);
  for (int lane = 0; lane < group; ++lane)
    for (int i = 0; i < values; ++i)
      if (lane + i * group < cols) ++taken[static_cast<std::size_t>(lane + i * group)];
  if (std::any_of(taken.begin(), taken.end(), [](int n) { return n != 1; })) return "columns not one lane's each";
  return {};
}

}  // namespace

TEST_CASE("flat_tile spans cover every element once, inside the tensor, at every remainder and shift") {
  int checked = 0;
  for (std::int64_t cols : geometry_widths())
    for (int elem_bytes : {2, 4})
      for (int threads : {128, 256}) {
        const RowwiseProblem p = dense_problem(RowOp::kSoftmax, elem_bytes == 2 ? DType::kF16 : DType::kF32,
                                               DType::kF32, 1, cols);
        const int fitted = rowwise::flat_tile_group(p);
        for (int group : {fitted, fitted / 2}) {
          if (group < 1) continue;
          const int tile_rows = flat_tile_rows(cols, elem_bytes, threads, group);
          CAPTURE(cols);
          CAPTURE(elem_bytes);
          CAPTURE(threads);
          CAPTURE(group);
          CAPTURE(tile_rows);
          REQUIRE(tile_rows > 0);
          REQUIRE(check_row_split(cols, tile_rows, threads, group) == "");
          // Every row count from 1 up to two tiles and one more remainder: each remainder
          // modulo the tile, in a first and in a later tile.
          for (std::int64_t rows = 1; rows <= 2 * tile_rows + 1; ++rows)
            for (unsigned shift = 0; shift < static_cast<unsigned>(kFlatTileUnitBytes / elem_bytes); ++shift) {
              const std::string why = check_spans(rows, cols, cols, elem_bytes, tile_rows, threads, shift);
              CHECK_MESSAGE(why.empty(), "rows=" << rows << " shift=" << shift << ": " << why);
              ++checked;
            }
        }
      }
  MESSAGE(checked << " (width, type, layout, rows, shift) cases");
}

TEST_CASE("flat_tile spans of rows with gaps load the gaps and store the rows only, at every gap, remainder and "
          "shift") {
  int checked = 0;
  for (std::int64_t cols : {1, 2, 3, 5, 7, 8, 11, 15, 16, 17, 24, 37, 49, 68, 84, 127, 255})
    for (int elem_bytes : {2, 4})
      for (int gap = 1; gap <= kFlatTileMaxGapBytes / elem_bytes; ++gap) {
        const RowwiseProblem p = dense_problem(RowOp::kSoftmax, elem_bytes == 2 ? DType::kF16 : DType::kF32,
                                               DType::kF32, 1, cols);
        const int threads = 128, group = rowwise::flat_tile_group(p);
        const int tile_rows = flat_tile_rows(cols, elem_bytes, threads, group);
        CAPTURE(cols);
        CAPTURE(elem_bytes);
        CAPTURE(gap);
        CAPTURE(tile_rows);
        for (std::int64_t rows = 1; rows <= 2 * tile_rows + 1; rows += rows < 4 ? 1 : 3)
          for (unsigned shift = 0; shift < static_cast<unsigned>(kFlatTileUnitBytes / elem_bytes); ++shift) {
            const std::string why = check_spans(rows, cols, cols + gap, elem_bytes, tile_rows, threads, shift);
            CHECK_MESSAGE(why.empty(), "rows=" << rows << " shift=" << shift << ": " << why);
            ++checked;
          }
      }
  MESSAGE(checked << " (width, type, gap, rows, shift) cases");
}

TEST_CASE("flat_tile tiles of 16-bit and fp32 rows aim near the target bytes and fit static shared memory, gaps "
          "or not") {
  const DeviceProps h100 = nominal_device(90);
  for (std::int64_t cols : geometry_widths())
    for (const auto& pair : kPairs)
      for (bool gapped : {false, true}) {
        RowwiseProblem p = dense_problem(RowOp::kSoftmax, pair[0], pair[1], 65536, cols);
        p.dense = !gapped;
        p.narrow_gaps = gapped;
        const KernelConfig c = rowwise::fit_flat_tile(p);
        CAPTURE(cols);
        CAPTURE(gapped);
        CAPTURE(c.to_string());
        CHECK(why_not_rowwise(p, h100, c) == "");
        const std::int64_t pitch = flat_tile_pitch_bound(cols, size_of(pair[0]), gapped);
        const std::int64_t in_bytes = flat_tile_rows(p, c) * pitch * size_of(pair[0]);
        // Whole passes within the target, one pass where a pass alone exceeds it.
        const std::int64_t pass_bytes = c.threads / c.group * pitch * size_of(pair[0]);
        CHECK(in_bytes <= std::max<std::int64_t>(kFlatTileTargetBytes, pass_bytes));
        CHECK((in_bytes + pass_bytes > kFlatTileTargetBytes || in_bytes == kFlatTileMaxPasses * pass_bytes));
        CHECK(flat_tile_smem_bytes(p, c) <= kFlatTileMaxSmemBytes);
        CHECK(rowwise_launch_shape(p, c, h100.sm_count).rows_per_block == flat_tile_rows(p, c));
      }
}

TEST_CASE("flat_tile takes dense rows, and rows of narrow gaps, up to its width only") {
  const DeviceProps h100 = nominal_device(90);
  RowwiseProblem p = dense_problem(RowOp::kSoftmax, DType::kF16, DType::kF16, 65536, 49);
  const KernelConfig tile = rowwise::fit_flat_tile(p);
  CHECK(tile == KernelConfig{Algorithm::kFlatTile, 1, 256, 16, 1});
  CHECK(why_not_rowwise(p, h100, tile) == "");
  CHECK(why_not_rowwise(p, nominal_device(80), tile) == "");

  RowwiseProblem padded = p;
  padded.dense = false;
  CHECK(why_not_rowwise(padded, h100, tile).find("dense") != std::string::npos);
  padded.narrow_gaps = true;  // gaps of at most 16 bytes each side
  CHECK(why_not_rowwise(padded, h100, tile) == "");

  RowwiseProblem wide = dense_problem(RowOp::kSoftmax, DType::kF32, DType::kF32, 1024, kFlatTileMaxCols + 1);
  CHECK(why_not_rowwise(wide, h100, rowwise::fit_flat_tile(wide)).find("256 columns") != std::string::npos);

  KernelConfig packed = tile;
  packed.pack = 2;
  p.max_pack = 8;
  CHECK(why_not_rowwise(p, h100, packed).find("pack must be 1") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kFlatTile, 1, 256, 64, 1}).find("group") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kFlatTile, 1, 256, 2, 1}).find("values a lane") != std::string::npos);
  CHECK(why_not_rowwise(p, h100, {Algorithm::kFlatTile, 1, 256, 16, 2}).find("cluster") != std::string::npos);

  // 1024 threads of 32-lane groups over fp32 rows of 256: 32 KB each way, past static memory.
  const RowwiseProblem big = dense_problem(RowOp::kSoftmax, DType::kF32, DType::kF32, 65536, 256);
  CHECK(why_not_rowwise(big, h100, {Algorithm::kFlatTile, 1, 1024, 32, 1}).find("shared memory") !=
        std::string::npos);

  // Completing the algorithm alone fits it; a pack named with it stays, for validity to refuse.
  CHECK(complete_rowwise_config(p, h100, KernelConfig{Algorithm::kFlatTile}) == tile);
  CHECK(complete_rowwise_config(p, h100, KernelConfig{Algorithm::kFlatTile, 4}).pack == 4);
}

TEST_CASE("dense rows are those whose strides both equal cols, or one row") {
  RowwiseArgs args{};
  args.rows = 5;
  args.cols = 49;
  args.in_row_stride = args.out_row_stride = 49;
  CHECK(dense_rows(args));
  args.out_row_stride = 50;
  CHECK_FALSE(dense_rows(args));
  args.out_row_stride = 49;
  args.in_row_stride = 64;
  CHECK_FALSE(dense_rows(args));
  args.rows = 1;
  CHECK(dense_rows(args));
  // Dense and padded calls of one class take separate dispatch entries; the tuning class (the
  // record's key fields) is the same.
  RowwiseProblem dense = dense_problem(RowOp::kSoftmax, DType::kF16, DType::kF16, 4096, 49);
  RowwiseProblem padded = dense;
  padded.dense = false;
  CHECK_FALSE(key_of(dense) == key_of(padded));
  CHECK(RowwiseFamily::key_fields(key_of(dense)) == RowwiseFamily::key_fields(key_of(padded)));
  // A call described as JSON (the tools, the tuner's class) is contiguous: dense.
  const RowwiseProblem described = RowwiseFamily::problem_from_json(
      nlohmann::json{{"op", "softmax"}, {"dtype", "f16"}, {"rows", 65536}, {"cols", 49}});
  CHECK(described.dense);
  CHECK(described.max_pack == 1);
}

TEST_CASE("rows of narrow gaps are those not dense whose gaps hold at most 16 bytes, and fewer elements than a row, on "
          "each side") {
  RowwiseArgs args{};
  args.rows = 5;
  args.cols = 49;
  args.in_dtype = DType::kF16;
  args.out_dtype = DType::kF32;
  args.in_row_stride = args.out_row_stride = 49;
  CHECK_FALSE(narrow_gap_rows(args));  // dense
  args.in_row_stride = 49 + 8;         // 16 bytes of f16
  CHECK(narrow_gap_rows(args));
  args.in_row_stride = 49 + 9;
  CHECK_FALSE(narrow_gap_rows(args));
  args.in_row_stride = 49;
  args.out_row_stride = 49 + 4;  // 16 bytes of fp32
  CHECK(narrow_gap_rows(args));
  args.out_row_stride = 49 + 5;
  CHECK_FALSE(narrow_gap_rows(args));
  args.out_row_stride = 49 + 1;
  args.rows = 1;
  CHECK_FALSE(narrow_gap_rows(args));  // one row is dense
  args.rows = 5;
  args.cols = 4;  // a gap as wide as the row is not narrow, whatever its bytes
  args.in_row_stride = 4 + 3;
  args.out_row_stride = 4;
  CHECK(narrow_gap_rows(args));
  args.in_row_stride = 4 + 4;
  CHECK_FALSE(narrow_gap_rows(args));
  args.in_row_stride = 4;
  args.out_row_stride = 4 + 4;
  CHECK_FALSE(narrow_gap_rows(args));
  // Each takes a dispatch entry of its own: a flat tile may not run wider gaps.
  RowwiseProblem gaps = dense_problem(RowOp::kSoftmax, DType::kF16, DType::kF16, 4096, 49);
  gaps.dense = false;
  RowwiseProblem wide_gaps = gaps;
  gaps.narrow_gaps = true;
  CHECK_FALSE(key_of(gaps) == key_of(wide_gaps));
  CHECK_FALSE(RowwiseKeyHash{}(key_of(gaps)) == RowwiseKeyHash{}(key_of(wide_gaps)));
}

TEST_CASE("a flat_tile config reads and writes as the others do") {
  const KernelConfig tile{Algorithm::kFlatTile, 1, 256, 16, 1};
  CHECK(tile.to_string() == "flat_tile pack=1 threads=256 group=16 cluster=1");
  CHECK(tile.to_json() ==
        R"({"algorithm":"flat_tile","pack":1,"threads":256,"group":16,"cluster":1,"cluster_grid":"resident"})");
  CHECK(KernelConfig::from_json(tile.to_json()) == tile);
  const RowwiseProblem p = dense_problem(RowOp::kLogSoftmax, DType::kBF16, DType::kF32, 100000, 100);
  const KernelSpec spec = rowwise_kernel_spec(p, tile);
  CHECK(spec.header == "flat_tile.cuh");
  CHECK(spec.name_expression == "kjit::flat_tile<1, kjit::Io<kjit::bf16, float>, 100, 256, 16, " +
                                    std::to_string(flat_tile_rows(p, tile)) + ", 0>");
  // Rows of narrow gaps: the gapped kernel, its tile sized for the widest gap.
  RowwiseProblem gaps = p;
  gaps.dense = false;
  gaps.narrow_gaps = true;
  CHECK(flat_tile_rows(gaps, tile) == flat_tile_rows(100, 2, 256, 16, true));
  CHECK(rowwise_kernel_spec(gaps, tile).name_expression ==
        "kjit::flat_tile<1, kjit::Io<kjit::bf16, float>, 100, 256, 16, " + std::to_string(flat_tile_rows(gaps, tile)) +
            ", 1>");
}
