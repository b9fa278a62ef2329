// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "cache/digest.h"
#include "cache/disk_cache.h"
#include "kjit/error.hpp"
#include "tests/cache/previous_format.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

const std::string kKey = R"({"kernel":"reduce_scale","spec":"<half,8>","arch":"sm_80"})";

std::string payload_of(std::size_t size) {
  std::string payload(size, '\0');
  for (std::size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 31 + 7);
  return payload;
}

// Plants `bytes` as the entry file for kKey, then checks get() refuses and removes it with
// exactly one warning, which it returns.
std::string expect_refused(DiskCache& cache, const std::string& bytes) {
  const std::string path = cache.entry_path("cubin", kKey);
  write_bytes(path, bytes);
  WarningCounter warnings;
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(warnings.count() == 1);
  CHECK(read_bytes(path).empty());  // removed
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(warnings.count() == 1);  // a plain miss now, no second warning
  return warnings.count() == 0 ? std::string() : warnings.messages()[0];
}

}  // namespace

TEST_CASE("put then get round-trips payload and metadata") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK(cache.readable());
  CHECK(cache.writable());
  CHECK_FALSE(cache.get("cubin", kKey));
  const std::string payload = payload_of(5000);
  REQUIRE(cache.put("cubin", kKey, payload, {{"registers", 40}}));
  auto entry = cache.get("cubin", kKey);
  REQUIRE(entry);
  CHECK(entry->payload == payload);
  CHECK(entry->metadata["registers"] == 40);
  CHECK(entry->key_text == kKey);
  CHECK_FALSE(cache.get("tune", kKey));  // kinds are separate namespaces

  DiskCache reopened(tmp / "cache");
  auto again = reopened.get("cubin", kKey);
  REQUIRE(again);
  CHECK(again->payload == payload);
}

TEST_CASE("layout is versioned, sharded and private") {
  TempDir tmp;
  DiskCache cache(tmp / "a/b/cache");
  REQUIRE(cache.put("tune", kKey, "record"));
  const std::string digest = digest_hex(kKey);
  const std::string expected =
      tmp / ("a/b/cache/v2/tune/" + digest.substr(0, 2) + "/" + digest + ".bin");
  CHECK(cache.entry_path("tune", kKey) == expected);
  CHECK(find_files(tmp.path(), ".bin") == std::vector<std::string>{expected});
  CHECK(find_files(tmp.path(), ".tmp").empty());
  // Created folders, parents included, are 0700; the entry is 0600.
  for (const char* folder : {"a", "a/b", "a/b/cache", "a/b/cache/v2", "a/b/cache/v2/tune"})
    CHECK(mode_of(tmp / folder) == 0700);
  CHECK(mode_of(expected) == 0600);
}

TEST_CASE("the previous layout's tree is neither read nor touched") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  // The v1 tree as the previous format left it: its entry for kKey, named by the previous hash.
  const std::string shard = tmp / ("cache/v1/cubin/" + kPreviousDigest.substr(0, 2));
  for (const std::string& folder : {tmp / "cache/v1", tmp / "cache/v1/cubin", shard})
    REQUIRE(::mkdir(folder.c_str(), 0700) == 0);
  const std::string old_entry = shard + "/" + kPreviousDigest + ".bin";
  write_bytes(old_entry, from_hex(kPreviousEntryHex));
  REQUIRE(kKey == kPreviousKey);

  WarningCounter warnings;
  CHECK_FALSE(cache.get("cubin", kKey));  // a plain miss: the key is compiled again
  CHECK(cache.list().empty());
  CHECK(cache.verify().checked == 0);
  REQUIRE(cache.put("cubin", kKey, "rebuilt"));
  CHECK(cache.get("cubin", kKey)->payload == "rebuilt");
  CHECK(cache.prune(1).removed == 1);  // only the new entry counts against the cap
  CHECK(cache.clear() == 0);
  CHECK(warnings.count() == 0);
  CHECK(read_bytes(old_entry) == from_hex(kPreviousEntryHex));
}

TEST_CASE("put overwrites an existing entry") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", kKey, "first"));
  REQUIRE(cache.put("cubin", kKey, "second"));
  CHECK(cache.get("cubin", kKey)->payload == "second");
  CHECK(find_files(tmp.path(), ".bin").size() == 1);
}

TEST_CASE("a hit refreshes the entry's mtime") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", kKey, "payload"));
  const std::string path = cache.entry_path("cubin", kKey);
  set_mtime(path, 1000000000);
  REQUIRE(cache.get("cubin", kKey));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(st.st_mtime > std::time(nullptr) - 60);
}

TEST_CASE("damaged entries are detected, removed and missed") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", kKey, payload_of(2000), {{"k", 1}}));
  const std::string good = read_bytes(cache.entry_path("cubin", kKey));

  SUBCASE("corrupt byte") {
    std::string bytes = good;
    bytes[bytes.size() / 2] ^= 0x40;
    expect_refused(cache, bytes);
  }
  SUBCASE("truncated file") { expect_refused(cache, good.substr(0, good.size() - 10)); }
  SUBCASE("empty file") { expect_refused(cache, ""); }
  SUBCASE("wrong magic") {
    std::string bytes = good;
    bytes.replace(0, 4, "ELF!");
    expect_refused(cache, bytes);
  }
  SUBCASE("wrong version") {
    std::string bytes = good;
    bytes[8] = static_cast<char>(kEntryFormatVersion + 1);
    expect_refused(cache, bytes);
  }
  SUBCASE("entry of the previous format") {
    REQUIRE(kKey == kPreviousKey);
    const std::string warning = expect_refused(cache, from_hex(kPreviousEntryHex));
    CHECK_MESSAGE(warning.find("entry format version 1,") != std::string::npos, warning);
  }
  SUBCASE("foreign key text under this key's file name") {
    expect_refused(cache, encode_entry("cubin", "another key", {}, "foreign payload"));
  }
  SUBCASE("entry of another kind under this kind's folder") {
    expect_refused(cache, encode_entry("tune", kKey, {}, "tune record"));
  }
  // After every kind of damage, a new put works again.
  REQUIRE(cache.put("cubin", kKey, "fresh"));
  CHECK(cache.get("cubin", kKey)->payload == "fresh");
}

TEST_CASE("an entry writable by group or others is refused") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", kKey, "payload"));
  const std::string path = cache.entry_path("cubin", kKey);
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  WarningCounter warnings;
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(warnings.count() == 1);
  CHECK(find_files(tmp.path(), ".bin").empty());
}

TEST_CASE("a symlink in place of an entry is refused") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", "other", "payload"));
  REQUIRE(cache.put("cubin", kKey, "payload"));
  const std::string path = cache.entry_path("cubin", kKey);
  REQUIRE(::unlink(path.c_str()) == 0);
  REQUIRE(::symlink(cache.entry_path("cubin", "other").c_str(), path.c_str()) == 0);
  WarningCounter warnings;
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(warnings.count() == 1);
  struct stat st {};
  CHECK(::lstat(path.c_str(), &st) != 0);  // the link is gone
  CHECK(cache.get("cubin", "other"));      // its target is untouched
}

TEST_CASE("invalid kinds are a caller error") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK_THROWS_AS(cache.put("../x", kKey, "p"), kjit::Error);
  CHECK_THROWS_AS(cache.get("", kKey), kjit::Error);
  CHECK_THROWS_AS(cache.lock("a/b", kKey), kjit::Error);
}

TEST_CASE("metadata with invalid UTF-8 is a caller error") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK_THROWS_AS(cache.put("cubin", kKey, "p", {{"bad", std::string("\xff\xfe")}}), kjit::Error);
  CHECK(find_files(tmp.path(), ".tmp").empty());
}

TEST_CASE("an empty folder name disables the cache quietly") {
  WarningCounter warnings;
  DiskCache cache("");
  CHECK_FALSE(cache.readable());
  CHECK_FALSE(cache.put("cubin", kKey, "p"));
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK_FALSE(cache.lock("cubin", kKey).held());
  CHECK(warnings.count() == 0);
}
