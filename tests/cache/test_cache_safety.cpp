// SPDX-License-Identifier: Apache-2.0
// Folder policy: unsafe folders are never read; unwritable ones degrade with one warning.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "cache/cache_layout.h"
#include "cache/disk_cache.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

const std::string kKey = "key-for-safety-tests";

// Calls every entry point a few times; the caller counts the warnings this produces.
void hammer(DiskCache& cache) {
  for (int i = 0; i < 3; ++i) {
    cache.get("cubin", kKey + std::to_string(i));
    cache.put("cubin", kKey + std::to_string(i), "payload");
    cache.lock("cubin", kKey + std::to_string(i));
  }
}

}  // namespace

TEST_CASE("a folder writable by everyone is refused") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  {
    DiskCache setup(dir);
    REQUIRE(setup.put("cubin", kKey, "planted?"));
  }
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK_FALSE(cache.readable());
  CHECK_FALSE(cache.writable());
  CHECK_FALSE(cache.get("cubin", kKey));  // valid on disk, but never read from here
  hammer(cache);
  CHECK(cache.list().empty());
  CHECK(cache.verify().checked == 0);
  REQUIRE(warnings.count() == 1);
  CHECK(warnings.messages()[0].find("writable by group or others") != std::string::npos);
  CHECK(find_files(dir, ".bin").size() == 1);  // refused, not deleted
}

TEST_CASE("a group-writable layout tree inside a private folder is refused") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  { DiskCache setup(dir); }
  REQUIRE(::chmod(CacheLayout(dir).root().c_str(), 0770) == 0);
  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK_FALSE(cache.readable());
  CHECK(warnings.count() == 1);
}

TEST_CASE("a folder that cannot be created degrades with one warning") {
  // A path under a regular file fails to create even for root.
  TempDir tmp;
  write_bytes(tmp / "file", "not a folder");
  WarningCounter warnings;
  DiskCache cache(tmp / "file/cache");
  CHECK_FALSE(cache.readable());
  CHECK_FALSE(cache.writable());
  hammer(cache);
  CHECK_FALSE(cache.put("cubin", kKey, "p"));
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK_FALSE(cache.lock("cubin", kKey).held());
  CHECK(cache.prune(0).removed == 0);
  CHECK(cache.clear() == 0);
  REQUIRE(warnings.count() == 1);
  CHECK(warnings.messages()[0].find("cannot create") != std::string::npos);
}

TEST_CASE("a read-only folder still serves what it holds") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  {
    DiskCache setup(dir);
    REQUIRE(setup.put("cubin", kKey, "kept"));
  }
  // Root ignores permissions: there the folder goes to an unprivileged user, who reads it.
  if (running_as_root()) REQUIRE(give_tree_to(tmp.path(), kUnprivilegedId) == "");
  REQUIRE(::chmod(dir.c_str(), 0500) == 0);
  REQUIRE(::chmod(CacheLayout(dir).root().c_str(), 0500) == 0);
  const std::string broken = run_unprivileged([&]() -> std::string {
    WarningCounter warnings;
    DiskCache cache(dir);
    if (!cache.readable()) return "not readable";
    if (cache.writable()) return "writable";
    auto entry = cache.get("cubin", kKey);
    if (!entry || entry->payload != "kept") return "the entry was not served";
    hammer(cache);
    if (cache.lock("cubin", kKey).held()) return "a lock was taken";
    if (warnings.count() != 1) return std::to_string(warnings.count()) + " warnings, not 1";
    return {};
  });
  CHECK_MESSAGE(broken.empty(), broken);
}

TEST_CASE("a write failure at run time degrades with one warning") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string root = CacheLayout(dir).root();
  DiskCache cache(dir);
  REQUIRE(cache.put("cubin", kKey, "stored before the failure"));
  // Make every later write fail: the layout tree moves away and a file takes its name.
  REQUIRE(::rename(root.c_str(), (root + ".away").c_str()) == 0);
  write_bytes(root, "blocks the whole tree");
  WarningCounter warnings;
  CHECK_FALSE(cache.put("tune", "a", "p"));
  CHECK_FALSE(cache.writable());
  CHECK_FALSE(cache.put("cubin", "b", "p"));  // degraded: no-op now, for every kind
  hammer(cache);
  CHECK(warnings.count() == 1);
  REQUIRE(::unlink(root.c_str()) == 0);
  REQUIRE(::rename((root + ".away").c_str(), root.c_str()) == 0);
  CHECK(cache.get("cubin", kKey)->payload == "stored before the failure");
}

TEST_CASE("a spoiled kind folder fails that kind's writes only") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  DiskCache cache(dir);
  REQUIRE(cache.put("cubin", kKey, "stored"));
  write_bytes(CacheLayout(dir).root() + "/tune", "not a folder");
  WarningCounter warnings;
  CHECK_FALSE(cache.put("tune", "a", "p"));
  CHECK(cache.writable());
  CHECK(cache.put("cubin", "b", "p"));
  CHECK(warnings.count() == 1);
  CHECK(warnings.messages()[0].find("not a folder") != std::string::npos);
}

TEST_CASE("an existing private folder keeps its mode") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK(cache.writable());
  CHECK(mode_of(dir) == 0755);  // not writable by others, so accepted as it is
  CHECK(warnings.count() == 0);
}
