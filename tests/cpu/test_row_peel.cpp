// SPDX-License-Identifier: Apache-2.0
// The geometry of peeled rows (kernel_sources/row_peel.cuh), exhaustively over every shift of
// each side, and the register kernels' use of it (row_regs.cuh: load_row_share and
// store_peeled_share) replayed on the host: every column read and written exactly once, every
// whole-vector access aligned on its own side, nothing outside the row touched.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_sources/row_layout.cuh"
#include "kernel_sources/row_peel.cuh"

using namespace kjit;

namespace {

// An address on a 256-byte boundary (as allocations are); rows start `lead` elements past it.
constexpr unsigned long long kBase = 0x7f0000000000ull;

struct Sides {
  int in_bytes;
  int out_bytes;
};
constexpr Sides kSides[] = {{4, 4}, {2, 2}, {2, 4}, {4, 2}};

int widest(const Sides& s) { return kMaxPackBytes / (s.in_bytes > s.out_bytes ? s.in_bytes : s.out_bytes); }

std::vector<long long> widths() {
  std::vector<long long> w;
  for (long long cols = 1; cols <= 300; ++cols) w.push_back(cols);
  for (long long cols : {511, 512, 513, 1000, 1021, 4093, 4097, 32001, 50257, 77777, 100003}) w.push_back(cols);
  return w;
}

// What one kernel row does to memory, replayed: how often each column was read and written,
// and the first problem seen (an access outside the row, or a whole vector off its grid).
struct Replay {
  std::vector<int> reads, writes;
  std::string problem;
  long long single_writes = 0;  // columns written element by element

  explicit Replay(long long cols) : reads(cols, 0), writes(cols, 0) {}
  void note(const std::string& what) {
    if (problem.empty()) problem = what;
  }
  void touch(std::vector<int>& counts, long long col, const char* side) {
    if (col < 0 || col >= static_cast<long long>(counts.size()))
      note(std::string(side) + " column " + std::to_string(col) + " is outside the row");
    else
      ++counts[col];
  }
  void vector(std::vector<int>& counts, unsigned long long row, int bytes, int pack, long long col,
              const char* side) {
    if ((row + col * bytes) % (static_cast<unsigned long long>(bytes) * pack) != 0)
      note(std::string(side) + " vector at column " + std::to_string(col) + " is not aligned");
    for (int i = 0; i < pack; ++i) touch(counts, col + i, side);
  }
};

// One row of `cols` through a group of `group` threads, each holding `packs` packs of `pack`, as
// row_regs.cuh does with Io::peel: loads on the input's grid (load_peeled_share), stores whole
// on the input's grid where the output starts at the input's lead, else realigned: each lane's
// output vector realign_shift into its pack, and element stores at the ends of each shuffle run
// (store_peeled_share; the kernels realign shares under realigns_share's limit, the replay every one).
Replay replay_row(const Sides& s, int pack, int group, int packs, long long cols, unsigned long long in,
                  unsigned long long out) {
  Replay r(cols);
  const int lead = row_lead(in, s.in_bytes, pack);
  const bool on_grid = output_on_input_grid(lead, row_lead(out, s.out_bytes, pack));
  for (int lane = 0; lane < group; ++lane)
    for (int p = 0; p < packs; ++p) {
      const long long col = vector_column(static_cast<long long>(p) * group + lane, pack, lead);
      if (whole_vector(col, pack, cols)) {
        r.vector(r.reads, in, s.in_bytes, pack, col, "input");
      } else {
        for (int i = 0; i < pack; ++i)
          if (col + i >= 0 && col + i < cols) r.touch(r.reads, col + i, "input");
      }
      auto write_elements = [&](long long from, long long to) {
        for (long long c = from; c < to; ++c)
          if (c >= 0 && c < cols) r.touch(r.writes, c, "output"), ++r.single_writes;
      };
      if (on_grid || pack == 1) {
        if (whole_vector(col, pack, cols)) r.vector(r.writes, out, s.out_bytes, pack, col, "output");
        else write_elements(col, col + pack);
        continue;
      }
      const int run = shuffle_run(group);
      const int shift = realign_shift(lead, row_lead(out, s.out_bytes, pack), pack);
      const RealignedStore part = realigned_store(lane % run, run);
      if (part.head) write_elements(col, col + shift);
      if (part.window) {
        if (whole_vector(col + shift, pack, cols)) r.vector(r.writes, out, s.out_bytes, pack, col + shift, "output");
        else write_elements(col + shift, col + shift + pack);
      }
      if (part.tail) write_elements(col + shift, col + pack);
    }
  for (long long c = 0; c < cols && r.problem.empty(); ++c)
    if (r.reads[c] != 1 || r.writes[c] != 1)
      r.note("column " + std::to_string(c) + " read " + std::to_string(r.reads[c]) + " times, written " +
             std::to_string(r.writes[c]));
  return r;
}

// The packs a thread of `group` holds in row_regs.cuh for a peeled row (kShareCols).
int peeled_packs(long long cols, int pack, int group) {
  return static_cast<int>(row_share_values(peeled_cols(cols, pack), pack, group) / pack);
}

}  // namespace

TEST_CASE("a row's lead is its start's offset into the vector grid, per side") {
  CHECK(row_lead(kBase, 4, 4) == 0);
  CHECK(row_lead(kBase + 4, 4, 4) == 1);
  CHECK(row_lead(kBase + 12, 4, 4) == 3);
  CHECK(row_lead(kBase + 16, 4, 4) == 0);
  CHECK(row_lead(kBase + 14, 2, 8) == 7);
  CHECK(row_lead(kBase + 6, 2, 4) == 3);  // bf16 in of a bf16 -> f32 kernel: 8-byte vectors
  CHECK(row_lead(kBase + 6, 2, 1) == 0);
  // A dense bf16 row of odd width 50257: the leads of rows 0..7 walk every shift of pack 8.
  std::vector<int> seen(8, 0);
  for (int row = 0; row < 8; ++row) ++seen[row_lead(kBase + row * 50257ull * 2, 2, 8)];
  for (int lead = 0; lead < 8; ++lead) CHECK(seen[lead] == 1);
}

TEST_CASE("head, whole vectors and tail cover the row once at every shift") {
  for (int pack : {1, 2, 4, 8})
    for (long long cols : widths())
      for (int lead = 0; lead < pack; ++lead) {
        CAPTURE(pack);
        CAPTURE(cols);
        CAPTURE(lead);
        const RowPeel peel = row_peel(cols, pack, lead);
        REQUIRE(peel.head + peel.body * pack + peel.tail == cols);
        REQUIRE(peel.head >= 0);
        REQUIRE(peel.head < pack);
        REQUIRE(peel.tail >= 0);
        REQUIRE(peel.tail < pack);
        // The head ends on the grid, unless the row ends first.
        if (peel.body > 0) REQUIRE((lead + peel.head) % pack == 0);
        // Whole vectors are exactly those whole_vector names, and the grid holds the row in
        // peeled_vectors vectors, never more than a share sized by peeled_cols provides.
        const long long vectors = peeled_vectors(cols, pack, lead);
        REQUIRE(vectors * pack >= lead + cols);
        REQUIRE(vectors <= (peeled_cols(cols, pack) + pack - 1) / pack);
        long long whole = 0;
        for (long long v = 0; v < vectors; ++v) {
          const long long col = vector_column(v, pack, lead);
          if (whole_vector(col, pack, cols)) {
            ++whole;
            REQUIRE(col >= peel.head);
            REQUIRE(col + pack <= peel.head + peel.body * pack);
          }
        }
        REQUIRE(whole == peel.body);
        // Each column sits at one (vector, lane), and that place names the column again.
        for (long long c = 0; c < cols; ++c) {
          const VectorLane at = vector_lane(c, pack, lead);
          REQUIRE(at.lane >= 0);
          REQUIRE(at.lane < pack);
          REQUIRE(at.vector < vectors);
          REQUIRE(vector_column(at.vector, pack, lead) + at.lane == c);
        }
      }
}

TEST_CASE("outputs off the input's lead are stored as whole vectors but at the shuffle runs' ends") {
  const Sides halves{2, 2};
  for (int group : {32, 256, 1024})
    for (long long cols : {4097ll, 37281ll})
      for (int in_lead = 0; in_lead < 8; ++in_lead)
        for (int out_lead = 0; out_lead < 8; ++out_lead) {
          if (row_share_values(peeled_cols(cols, 8), 8, group) > 128) continue;
          const Replay r = replay_row(halves, 8, group, peeled_packs(cols, 8, group), cols, kBase + in_lead * 2,
                                      kBase + out_lead * 2);
          CAPTURE(group);
          CAPTURE(cols);
          CAPTURE(in_lead);
          CAPTURE(out_lead);
          REQUIRE(r.problem.empty());
          // A run of 32 lanes stores one vector's worth singly, plus the row's head and tail.
          CHECK(r.single_writes <= cols / 32 + 16);
        }
}

TEST_CASE("the register kernels' peeled rows: every column once, whole vectors aligned, nothing outside") {
  const std::vector<long long> all = widths();
  int rows = 0;
  for (const Sides& s : kSides)
    for (int pack = 2; pack <= widest(s); pack *= 2)
      for (int group : {1, 4, 32, 128, 512, 1024})
        for (long long cols : all) {
          if (row_share_values(peeled_cols(cols, pack), pack, group) > 128) continue;  // past what a thread holds
          const int packs = peeled_packs(cols, pack, group);
          for (int in_lead = 0; in_lead < pack; ++in_lead)
            for (int out_lead = 0; out_lead < pack; ++out_lead) {
              const Replay r = replay_row(s, pack, group, packs, cols, kBase + in_lead * s.in_bytes,
                                          kBase + out_lead * s.out_bytes);
              ++rows;
              if (!r.problem.empty()) {
                FAIL_CHECK(std::to_string(s.in_bytes) << "->" << s.out_bytes << " bytes pack=" << pack
                                                      << " group=" << group << " cols=" << cols << " in_lead="
                                                      << in_lead << " out_lead=" << out_lead << ": " << r.problem);
                return;
              }
            }
        }
  MESSAGE(rows << " rows replayed");
  CHECK(rows > 100000);
}

TEST_CASE("where the sides' shifts differ, the output still gets every column once") {
  // bf16 in, f32 out, pack 4: the input's vectors are 8 bytes, the output's 16. A padded output
  // stride shifts the output alone; the rows then store element by element.
  const Sides mixed{2, 4};
  const long long cols = 1001;
  const int packs = peeled_packs(cols, 4, 32);
  for (int row = 0; row < 16; ++row) {
    const unsigned long long in = kBase + row * cols * 2;          // dense
    const unsigned long long out = kBase + 4 + row * (cols + 6) * 4;  // shifted, padded
    CAPTURE(row);
    const Replay r = replay_row(mixed, 4, 32, packs, cols, in, out);
    CHECK(r.problem.empty());
    INFO(r.problem);
  }
  // Equal shifts on both sides, whatever the element sizes: whole vectors on both.
  CHECK(output_on_input_grid(row_lead(kBase + 6, 2, 4), row_lead(kBase + 12, 4, 4)));
  CHECK_FALSE(output_on_input_grid(row_lead(kBase + 6, 2, 4), row_lead(kBase + 8, 4, 4)));
}

TEST_CASE("a peeled share is at most a pack more than an aligned one") {
  // What the host's validity (share_cols) and the kernels (kShareCols) size shares by.
  for (int pack : {1, 2, 4, 8})
    for (long long cols : widths())
      for (int group : {1, 32, 256}) {
        const long long aligned = row_share_values(cols, pack, group);
        const long long peeled = row_share_values(peeled_cols(cols, pack), pack, group);
        CHECK(peeled >= aligned);
        CHECK(peeled <= aligned + pack);
        if (pack == 1) CHECK(peeled == aligned);
      }
}
