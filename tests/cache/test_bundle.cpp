// SPDX-License-Identifier: Apache-2.0
// Bundle export, import and read-only opening, including damaged bundles.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <string>

#include "cache/bundle.h"
#include "cache/bundle_format.h"
#include "cache/disk_cache.h"
#include "kjit/error.hpp"
#include "tests/cache/previous_format.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

constexpr int kEntries = 5;

std::string key_of(int i) { return R"({"bundle_key":)" + std::to_string(i) + "}"; }
std::string payload_of(int i) { return std::string(100 + i * 50, static_cast<char>('a' + i)); }

// A cache with kEntries cubins and one tuning record, exported to <tmp>/all.kjb.
std::string make_bundle(const TempDir& tmp) {
  DiskCache source(tmp / "source");
  for (int i = 0; i < kEntries; ++i)
    REQUIRE(source.put("cubin", key_of(i), payload_of(i), {{"index", i}}));
  REQUIRE(source.put("tune", key_of(0), "tuning record"));
  const std::string path = tmp / "all.kjb";
  CHECK(source.export_bundle(path) == kEntries + 1);
  return path;
}

}  // namespace

TEST_CASE("export then import into an empty folder round-trips") {
  TempDir tmp;
  const std::string path = make_bundle(tmp);
  CHECK(mode_of(path) == 0600);
  DiskCache target(tmp / "target");
  CHECK(target.import_bundle(path) == kEntries + 1);
  for (int i = 0; i < kEntries; ++i) {
    auto entry = target.get("cubin", key_of(i));
    REQUIRE(entry);
    CHECK(entry->payload == payload_of(i));
    CHECK(entry->metadata["index"] == i);
  }
  CHECK(target.get("tune", key_of(0))->payload == "tuning record");
  CHECK(target.verify().ok == kEntries + 1);
}

TEST_CASE("a bundle answers gets read-only") {
  TempDir tmp;
  const std::string path = make_bundle(tmp);
  Bundle bundle(path);
  REQUIRE(bundle.valid());
  CHECK(bundle.problem().empty());
  CHECK(bundle.size() == kEntries + 1);
  CHECK(bundle.get("cubin", key_of(3))->payload == payload_of(3));
  CHECK(bundle.get("tune", key_of(0))->payload == "tuning record");
  CHECK_FALSE(bundle.get("tune", key_of(1)));
  CHECK_FALSE(bundle.get("cubin", "absent"));
  int visited = 0;
  bundle.for_each([&](const Entry&) { ++visited; });
  CHECK(visited == kEntries + 1);
}

TEST_CASE("exporting skips bad entries and an empty cache exports an empty bundle") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK(cache.export_bundle(tmp / "empty.kjb") == 0);
  Bundle empty(tmp / "empty.kjb");
  CHECK(empty.valid());
  CHECK(empty.size() == 0);

  REQUIRE(cache.put("cubin", "good", "g"));
  REQUIRE(cache.put("cubin", "bad", "b"));
  write_bytes(cache.entry_path("cubin", "bad"), "junk");
  CHECK(cache.export_bundle(tmp / "one.kjb") == 1);
}

TEST_CASE("a damaged bundle warns once and behaves as empty") {
  TempDir tmp;
  const std::string path = make_bundle(tmp);
  const std::string good = read_bytes(path);
  std::string bytes = good;

  SUBCASE("header byte") { bytes[20] ^= 1; }
  SUBCASE("entry byte") { bytes[200] ^= 1; }
  SUBCASE("index byte") { bytes[bytes.size() - 5] ^= 1; }
  SUBCASE("truncated") { bytes.resize(bytes.size() - 1); }
  SUBCASE("appended") { bytes += "x"; }
  SUBCASE("too short") { bytes.resize(10); }
  SUBCASE("not a bundle") { bytes = std::string(200, 'z'); }

  write_bytes(path, bytes);
  WarningCounter warnings;
  Bundle bundle(path);
  CHECK_FALSE(bundle.valid());
  CHECK_FALSE(bundle.problem().empty());
  CHECK(bundle.size() == 0);
  CHECK_FALSE(bundle.get("cubin", key_of(0)));
  CHECK(warnings.count() == 1);
  DiskCache target(tmp / "target");
  CHECK_THROWS_AS(target.import_bundle(path), kjit::Error);
  CHECK(target.list().empty());
}

TEST_CASE("a bundle of the previous format is refused as stale, not damaged") {
  TempDir tmp;
  const std::string path = tmp / "previous.kjb";
  write_bytes(path, from_hex(kPreviousEmptyBundleHex));
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  WarningCounter warnings;
  Bundle bundle(path);
  CHECK_FALSE(bundle.valid());
  const std::string expected =
      "bundle format version 1, expected " + std::to_string(kBundleFormatVersion);
  CHECK_MESSAGE(bundle.problem().find(expected) != std::string::npos, bundle.problem());
  CHECK(warnings.count() == 1);
  DiskCache target(tmp / "target");
  CHECK_THROWS_AS(target.import_bundle(path), kjit::Error);
}

TEST_CASE("a missing or group-writable bundle is refused") {
  TempDir tmp;
  WarningCounter warnings;
  CHECK_FALSE(Bundle(tmp / "missing.kjb").valid());
  const std::string path = make_bundle(tmp);
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  Bundle writable(path);
  CHECK_FALSE(writable.valid());
  CHECK(writable.problem().find("writable") != std::string::npos);
  CHECK(warnings.count() == 2);
}

TEST_CASE("import reports a folder that cannot take writes") {
  TempDir tmp;
  const std::string path = make_bundle(tmp);
  write_bytes(tmp / "file", "x");
  DiskCache broken(tmp / "file/cache");
  try {
    broken.import_bundle(path);
    FAIL("import into an unusable folder must throw");
  } catch (const kjit::Error& e) {
    CHECK(e.status() == kjit::Status::kErrorCacheIo);
  }
}

TEST_CASE("export to an unwritable place throws kErrorCacheIo") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK_THROWS_AS(cache.export_bundle(tmp / "no/such/folder/x.kjb"), kjit::Error);
  CHECK(find_files(tmp.path(), ".tmp").empty());
}
