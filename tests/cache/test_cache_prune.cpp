// SPDX-License-Identifier: Apache-2.0
// Size cap, verification, clearing and listing.
#include <doctest/doctest.h>

#include <string>

#include "cache/cache_layout.h"
#include "cache/disk_cache.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

constexpr std::int64_t kBaseTime = 1700000000;

std::string key_of(int i) { return "prune-key-" + std::to_string(i); }

// Puts `count` entries of equal size with mtimes one minute apart, oldest first; returns the
// size of one entry file.
std::uint64_t fill(DiskCache& cache, int count) {
  for (int i = 0; i < count; ++i) {
    REQUIRE(cache.put("cubin", key_of(i), std::string(1000, 'p')));
    set_mtime(cache.entry_path("cubin", key_of(i)), kBaseTime + 60 * i);
  }
  return read_bytes(cache.entry_path("cubin", key_of(0))).size();
}

std::uint64_t total_bytes(const std::string& dir) {
  std::uint64_t total = 0;
  for (const std::string& path : find_files(dir, ".bin")) total += read_bytes(path).size();
  return total;
}

}  // namespace

TEST_CASE("prune respects the cap and removes the oldest first") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  const std::uint64_t one = fill(cache, 10);
  PruneReport report = cache.prune(one * 4 + one / 2);
  CHECK(report.removed == 6);
  CHECK(report.bytes_before == one * 10);
  CHECK(report.bytes_after == one * 4);
  CHECK(total_bytes(tmp / "cache") == one * 4);
  for (int i = 0; i < 10; ++i) {
    INFO("entry " << i);
    CHECK(cache.get("cubin", key_of(i)).has_value() == (i >= 6));
  }
}

TEST_CASE("a hit makes an entry the most recently used") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  const std::uint64_t one = fill(cache, 3);
  REQUIRE(cache.get("cubin", key_of(0)));  // oldest becomes newest
  cache.prune(one * 2);
  CHECK(cache.get("cubin", key_of(0)));
  CHECK_FALSE(cache.get("cubin", key_of(1)));
  CHECK(cache.get("cubin", key_of(2)));
}

TEST_CASE("prune under the cap removes nothing; prune(1) removes everything; 0 is no cap") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  const std::uint64_t one = fill(cache, 4);
  for (int i = 0; i < 4; ++i) CHECK(cache.lock("cubin", key_of(i)).held());  // leaves lock files
  const std::string cubins = CacheLayout(tmp / "cache").root() + "/cubin";
  REQUIRE(find_files(cubins, ".lock").size() == 4);
  CHECK(cache.prune(one * 4).removed == 0);
  CHECK(cache.prune(0).removed == 0);  // 0 means no cap, as KJIT_CACHE_MAX_SIZE=0 does
  CHECK(cache.prune(1).removed == 4);
  CHECK(find_files(tmp / "cache", ".bin").empty());
  CHECK(find_files(cubins, ".lock").empty());  // idle locks go with their entries
}

TEST_CASE("put prunes once the running total passes the cap") {
  TempDir tmp;
  const std::uint64_t one = [&] {
    DiskCache probe(tmp / "probe");
    return fill(probe, 1);
  }();
  const std::uint64_t cap = one * 5;
  DiskCache cache(tmp / "cache", cap);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(cache.put("cubin", key_of(i), std::string(1000, 'p')));
    set_mtime(cache.entry_path("cubin", key_of(i)), kBaseTime + 60 * i);
    CHECK(total_bytes(tmp / "cache") <= cap);
  }
  CHECK(cache.get("cubin", key_of(19)));  // the newest always survives
  CHECK_FALSE(cache.get("cubin", key_of(0)));
}

TEST_CASE("verify reports a clean cache and removes bad entries") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  fill(cache, 5);
  VerifyReport clean = cache.verify();
  CHECK(clean.checked == 5);
  CHECK(clean.ok == 5);
  CHECK(clean.removed == 0);

  const std::string damaged = cache.entry_path("cubin", key_of(2));
  std::string bytes = read_bytes(damaged);
  bytes[bytes.size() - 3] ^= 1;
  write_bytes(damaged, bytes);
  const std::string moved = cache.entry_path("cubin", key_of(3));
  write_bytes(moved, read_bytes(cache.entry_path("cubin", key_of(4))));  // right bytes, wrong name

  VerifyReport report = cache.verify();
  CHECK(report.checked == 5);
  CHECK(report.ok == 3);
  CHECK(report.removed == 2);
  REQUIRE(report.reasons.size() == 2);
  CHECK(cache.verify().removed == 0);
  CHECK(cache.get("cubin", key_of(4)));
}

TEST_CASE("clear removes every entry") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  fill(cache, 6);
  cache.lock("cubin", key_of(0));
  REQUIRE(cache.put("tune", "tuned", "{}"));
  CHECK(cache.clear() == 7);
  CHECK(find_files(tmp / "cache", ".bin").empty());
  CHECK(find_files(tmp / "cache", ".lock").size() <= 1);  // only prune.lock may stay
  CHECK(cache.list().empty());
  CHECK(cache.put("cubin", key_of(0), "again"));
  CHECK(cache.get("cubin", key_of(0))->payload == "again");
}

TEST_CASE("list shows every valid entry, oldest first") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  fill(cache, 3);
  REQUIRE(cache.put("tune", "tuning-key", "record", {{"best", "cfg"}}));
  REQUIRE(cache.put("cubin", "damaged", "x"));
  write_bytes(cache.entry_path("cubin", "damaged"), "junk");  // skipped by list
  std::vector<EntryInfo> infos = cache.list();
  REQUIRE(infos.size() == 4);
  CHECK(infos[0].key_text == key_of(0));
  CHECK(infos[2].key_text == key_of(2));
  CHECK(infos[3].kind == "tune");
  CHECK(infos[3].metadata["best"] == "cfg");
  CHECK(infos[3].payload_size == 6);
  CHECK(infos[0].path == cache.entry_path("cubin", key_of(0)));
  CHECK(infos[0].mtime < infos[1].mtime);
}
