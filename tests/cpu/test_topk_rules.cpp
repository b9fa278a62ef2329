// SPDX-License-Identifier: Apache-2.0
// The softmax + top-K heuristic's rules, one row each: a call on a nominal device, the algorithm
// the rule gives it and the part of the config the rule decides, and the rule in one line. The
// rows take every branch of choose_topk_config; README's top-K table states the rules. Calls
// are planned as the dispatcher plans them (planned_topk: the top of the rows bucket, the K
// bucket's largest k). The H100 (sm_90) has 132 SMs, the A100 (sm_80) 108.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>

#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/driver/nominal_device.h"
#include "kjit/kjit.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

using namespace kjit;

namespace {

constexpr DType f32 = DType::kF32, bf16 = DType::kBF16;
constexpr TopkAlgorithm stream = TopkAlgorithm::kStream, resident = TopkAlgorithm::kResident;

struct Rule {
  const char* rule;
  int arch;
  DType in;
  std::int64_t rows, cols;
  int k;
  TopkAlgorithm expected;
  const char* detail;  ///< a part of the pick's to_string() the rule decides
};

const Rule kRules[] = {
    // Which kernel: resident where every row's blocks run at once.
    {"one row of 128256 -> resident over a cluster of 16", 90, f32, 1, 128256, 50, resident, "cluster=16"},
    {"8 rows a cluster of 8 holds (64 blocks) -> resident over 8", 90, f32, 8, 128256, 50, resident, "cluster=8"},
    {"64 rows two blocks each hold (128 blocks) -> resident over 2", 90, f32, 64, 32000, 1000, resident, "cluster=2"},
    {"64 rows that need 4 blocks each (256 blocks) do not all run at once -> stream", 90, f32, 64, 50257, 256, stream,
     ""},
    {"many rows -> stream, a block a row", 90, f32, 1024, 128256, 50, stream, "cluster=1"},
    {"more than 7 rows that need clusters of 16 would take two rounds -> stream over clusters of 8", 90, f32, 8,
     151936, 50, stream, "cluster=8"},
    {"the same at a large k -> stream over clusters of 8", 90, f32, 8, 151936, 1024, stream, "cluster=8"},
    {"a row no cluster of 16 holds (more than 16 x 16384 values) -> stream over up to 8 blocks", 90, f32, 1, 1 << 20,
     50, stream, "cluster=8"},
    {"a short row -> resident in one block of 128 threads", 90, f32, 1, 7, 7, resident, "threads=128 packs=1 cluster=1"},
    {"k = 4096 over a row of 4096 -> resident in one block", 90, f32, 128, 4096, 4096, resident, "cluster=1"},

    // Blocks a row of the resident kernel.
    {"a row 8-16 blocks hold at one pack a thread takes that many, any count, where all rows run at once -> 13", 90,
     f32, 4, 50257, 50, resident, "packs=1 cluster=13"},
    {"the same rule at 32000 columns -> 8 blocks of one pack", 90, f32, 4, 32000, 50, resident, "packs=1 cluster=8"},
    {"otherwise blocks grow in powers of two while every row's blocks fit the SMs -> 8 of two packs", 90, f32, 8,
     50257, 50, resident, "packs=2 cluster=8"},
    {"a row grows to 16 blocks at a small k", 90, f32, 1, 20000, 50, resident, "cluster=16"},
    {"from k bucket 1024 a row 8 blocks hold at 8192 values or fewer stays at 8", 90, f32, 1, 20000, 1000, resident,
     "cluster=8"},
    {"8 rows (calls of 5-8) of 16-bit values: clusters of 16 past one round, 8 blocks of two packs", 90, bf16, 8,
     128256, 50, resident, "pack=8 threads=1024 packs=2 cluster=8"},

    // Threads and unroll of the stream kernel.
    {"a large k whose blocks each have an SM, clusters of at most 4 -> 1024 threads", 90, f32, 64, 128256, 1024,
     stream, "threads=1024 unroll=2 cluster=2"},
    {"a large k whose blocks share SMs -> 512 threads, half the values in flight", 90, f32, 256, 128256, 1024, stream,
     "threads=512 unroll=2 cluster=1"},
    {"a small k -> 512 threads, 16 values a thread in flight", 90, f32, 1024, 128256, 50, stream,
     "threads=512 unroll=4"},
    {"k from 256 over a slice of at most two tiles of 512 threads -> 1024 threads", 90, f32, 1024, 16000, 256,
     stream, "threads=1024 unroll=2 cluster=1"},
    {"the same slice at a small k -> 512 threads", 90, f32, 1024, 16000, 50, stream, "threads=512 unroll=4"},

    // sm_80: no clusters.
    {"sm_80: a row one block holds -> resident", 80, f32, 1, 16000, 1000, resident, "cluster=1"},
    {"sm_80: a row wider than one block holds -> stream, a block a row", 80, f32, 1, 128256, 50, stream, "cluster=1"},
    {"sm_80: k = 4096's buffer leaves room for one pack a thread a step -> stream, unroll 1", 80, f32, 1, 128256, 4096,
     stream, "unroll=1"},
};

TopkProblem planned(const Rule& r) {
  return planned_topk({r.in, DType::kI64, r.rows, r.cols, r.k, 16 / size_of(r.in)});
}

std::string describe(const TopkProblem& p, const DeviceProps& device) {
  return std::string(to_string(p.in_dtype)) + " rows=" + std::to_string(p.rows) + " cols=" + std::to_string(p.cols) +
         " k=" + std::to_string(p.k) + " max_pack=" + std::to_string(p.max_pack) + " on " + device.name;
}

}  // namespace

TEST_CASE("each top-K rule picks its algorithm and config") {
  for (const Rule& r : kRules) {
    const TopkProblem p = planned(r);
    const DeviceProps device = nominal_device(r.arch);
    const TopkConfig pick = choose_topk_config(p, device);
    const bool matches = pick.algorithm == r.expected && pick.to_string().find(r.detail) != std::string::npos;
    CHECK_MESSAGE(matches, std::string(r.rule) << "\n  " << describe(p, device) << " picked " << pick.to_string());
  }
}

TEST_CASE("the top-K rule table has both kernels on both archs") {
  std::set<std::pair<int, TopkAlgorithm>> seen;
  for (const Rule& r : kRules) seen.insert({r.arch, r.expected});
  for (int arch : {80, 90})
    for (TopkAlgorithm a : {stream, resident})
      CHECK_MESSAGE(seen.count({arch, a}), "no sm_" << arch << " rule for " << std::string(to_string(a)));
}

TEST_CASE("why_not_topk names what a config breaks") {
  const DeviceProps a100 = nominal_device(80), h100 = nominal_device(90);
  const TopkProblem p{f32, DType::kI64, 1, 128256, 50, 4};
  CHECK(why_not_topk(p, h100, {4, 512, 4, 1, stream}).empty());
  CHECK(why_not_topk(p, a100, {4, 256, 4, 2, stream}).find("sm_90") != std::string::npos);
  CHECK(why_not_topk(p, h100, {8, 256, 4, 1, stream}).find("16 bytes") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 100, 4, 1, stream}).find("threads") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 256, 4, 1}).find("algorithm") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 256, 9, 1, stream}).find("unroll") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 256, 4, 17, stream}).find("cluster") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 256, 9, 16, resident}).find("packs") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 1024, 8, 4, resident}).find("register") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 1024, 2, 8, resident}).find("hold") != std::string::npos);
  CHECK(why_not_topk(p, h100, {4, 1024, 4, 8, resident}).empty());
  const TopkProblem big_k{f32, DType::kI64, 1, 128256, 4096, 4};
  CHECK(why_not_topk(big_k, a100, {4, 1024, 8, 1, stream}).find("shared memory") != std::string::npos);
  const TopkProblem unaligned{f32, DType::kI64, 4, 1000, 10, 1};
  // The stream kernel reads rows off the alignment shifted to 16 bytes; the resident kernel may not.
  CHECK(why_not_topk(unaligned, h100, {4, 256, 4, 1, stream}).empty());
  CHECK(why_not_topk(unaligned, h100, {4, 256, 1, 1, resident}).find("alignment") != std::string::npos);
  CHECK(why_not_topk(unaligned, h100, choose_topk_config(unaligned, h100)).empty());
}
