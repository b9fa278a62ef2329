// SPDX-License-Identifier: Apache-2.0
// Whatever sits in the cache tree, nothing hangs, crashes or deletes what is not the cache's own:
// FIFOs and folders at an entry's name, links and shared folders in place of the tree's own,
// entries whose checksum is right but whose metadata is not.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cache/cache_layout.h"
#include "cache/digest.h"
#include "cache/disk_cache.h"
#include "kjit/error.hpp"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

const std::string kKey = R"({"odd_tree_key":1})";

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

/// The shard folder of kKey's cubin entry, created by a put of another key in it.
std::string make_shard(const std::string& dir) {
  DiskCache cache(dir);
  const std::string path = cache.entry_path("cubin", kKey);
  REQUIRE(cache.put("cubin", kKey, "first"));
  REQUIRE(::unlink(path.c_str()) == 0);
  return path;
}

}  // namespace

TEST_CASE("a FIFO at an entry's name is a bad entry: get does not block, verify removes it") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  // In a child with a deadline: before the fix, opening the FIFO waited for a writer forever.
  CHECK(exits_cleanly_within(20, [&] {
    DiskCache cache(dir);
    if (cache.get("cubin", kKey)) ::_exit(3);
  }));
  CHECK_FALSE(exists(path));  // get() removed it as a bad entry

  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  VerifyReport report;
  CHECK(exits_cleanly_within(20, [&] {
    DiskCache cache(dir);
    if (cache.verify().removed != 1) ::_exit(3);
  }));
  CHECK_FALSE(exists(path));

  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  DiskCache cache(dir);
  report = cache.verify();
  CHECK(report.checked == 1);
  CHECK(report.ok == 0);
  CHECK(mentions(report.reasons, "is a FIFO, not a regular file"));
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  cache.clear();
  CHECK_FALSE(exists(path));
  CHECK(cache.put("cubin", kKey, "fresh"));
  CHECK(cache.get("cubin", kKey)->payload == "fresh");
}

TEST_CASE("a socket at an entry's name is bad too, not merely unreadable") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(sock >= 0);
  sockaddr_un address {};
  address.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof address.sun_path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  ::close(sock);
  DiskCache cache(dir);
  const VerifyReport report = cache.verify();
  CHECK(report.removed == 1);
  CHECK(mentions(report.reasons, "is a socket, not a regular file"));
  CHECK_FALSE(exists(path));
}

TEST_CASE("a folder at an entry's name is replaced by the next put; writes stay on") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  write_bytes(path + "/inside", "x");
  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(cache.put("cubin", kKey, "stored"));
  CHECK(cache.writable());
  CHECK(cache.get("cubin", kKey)->payload == "stored");
  CHECK(cache.put("cubin", "another key", "also stored"));
  CHECK(warnings.count() >= 1);
}

TEST_CASE("verify and clear remove a folder at an entry's name, but never follow a link in it") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  const std::string outside = tmp / "outside.txt";
  write_bytes(outside, "not the cache's");
  for (const bool by_verify : {true, false}) {
    CAPTURE(by_verify);
    REQUIRE(::mkdir(path.c_str(), 0700) == 0);
    REQUIRE(::mkdir((path + "/deeper").c_str(), 0700) == 0);
    write_bytes(path + "/deeper/file", "x");
    REQUIRE(::symlink(outside.c_str(), (path + "/link").c_str()) == 0);
    REQUIRE(::symlink(tmp.path().c_str(), (path + "/folder_link").c_str()) == 0);
    DiskCache cache(dir);
    if (by_verify) {
      const VerifyReport report = cache.verify();
      CHECK(report.removed == 1);
      CHECK(mentions(report.reasons, "is a directory, not a regular file"));
    } else {
      cache.clear();
    }
    CHECK_FALSE(exists(path));
    CHECK(read_bytes(outside) == "not the cache's");
  }
}

TEST_CASE("a shard that is a link is never followed: verify, clear and get leave its target alone") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  const std::string shard = path.substr(0, path.rfind('/'));
  // Another user's folder, holding a file named like an entry (and a valid entry of our own).
  const std::string victim = tmp / "victim";
  REQUIRE(::mkdir(victim.c_str(), 0755) == 0);
  const std::string name = path.substr(path.rfind('/') + 1);
  write_bytes(victim + "/" + name, "someone else's file");
  write_bytes(victim + "/other.bin", "someone else's file");
  write_bytes(victim + "/.x.bin.1.1.tmp", "someone else's temp-looking file");
  REQUIRE(::rmdir(shard.c_str()) == 0);
  REQUIRE(::symlink(victim.c_str(), shard.c_str()) == 0);

  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK_FALSE(cache.get("cubin", kKey));
  const VerifyReport report = cache.verify();
  CHECK(mentions(report.unsafe, "is a symbolic link, not a folder"));
  cache.prune(1);
  cache.clear();
  CHECK(read_bytes(victim + "/" + name) == "someone else's file");
  CHECK(read_bytes(victim + "/other.bin") == "someone else's file");
  CHECK(exists(victim + "/.x.bin.1.1.tmp"));
  CHECK_FALSE(cache.put("cubin", kKey, "not through the link"));
  CHECK(read_bytes(victim + "/" + name) == "someone else's file");
  CHECK(cache.writable());  // one spoiled shard does not stop the others
}

TEST_CASE("a kind folder others can write to is neither read nor cleaned") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  DiskCache setup(dir);
  REQUIRE(setup.put("cubin", kKey, "planted by someone who could write the folder?"));
  const std::string kind = CacheLayout(dir).root() + "/cubin";
  REQUIRE(::chmod(kind.c_str(), 0777) == 0);
  WarningCounter warnings;
  DiskCache cache(dir);
  CHECK_FALSE(cache.get("cubin", kKey));
  const VerifyReport report = cache.verify();
  CHECK(report.checked == 0);
  CHECK(mentions(report.unsafe, "writable by group or others"));
  cache.clear();
  CHECK(exists(path));  // nothing removed in a folder others control
  CHECK(cache.list().empty());
}

TEST_CASE("an entry with a good checksum but odd metadata is a miss that verify removes") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::pair<const char*, std::string> cases[] = {
      {"a string where a number belongs", R"({"registers": "forty"})"},
      {"a negative count", R"({"spill_stores": -8})"},
      {"a count past 2^30", R"({"registers": 18446744073709551615})"},
      {"a winner that is not an object", R"({"winner": [1, 2]})"},
      {"a compile time that is not a duration", R"({"compile_ms": "slow"})"},
      {"metadata that is not an object", "[1, 2, 3]"},
      {"metadata nested 100,000 deep", R"({"a": )" + deep + "}"},
      {"metadata that is not JSON", "{"},
  };
  for (const auto& item : cases) {
    const auto& what = item.first;
    const auto& meta = item.second;
    CAPTURE(what);
    write_bytes(path, forged_entry("cubin", kKey, meta, "payload"));
    DiskCache cache(dir);
    REQUIRE(cache.put("cubin", "a good neighbour", "payload", {{"registers", 32}}));
    CHECK(cache.list().size() == 1);  // the odd one is skipped, the listing goes on
    const VerifyReport report = cache.verify();
    CHECK(report.ok == 1);
    CHECK(report.removed == 1);
    CHECK(mentions(report.reasons, "metadata: "));
    write_bytes(path, forged_entry("cubin", kKey, meta, "payload"));
    CHECK_FALSE(cache.get("cubin", kKey));
    CHECK_FALSE(exists(path));
  }
}

TEST_CASE("put refuses metadata that get would refuse") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  CHECK_THROWS_AS(cache.put("cubin", kKey, "p", {{"registers", "forty"}}), kjit::Error);
  CHECK_THROWS_AS(cache.put("cubin", kKey, "p", nlohmann::json::array({1})), kjit::Error);
  CHECK(cache.writable());
  CHECK(cache.put("cubin", kKey, "p", {{"registers", 40}, {"anything_else", "kept"}}));
  const auto entry = cache.get("cubin", kKey);
  REQUIRE(entry);
  CHECK(entry->facts.registers == 40);
  CHECK(entry->metadata["anything_else"] == "kept");
}

TEST_CASE("an entry file larger than an entry may be is bad without being read") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string path = make_shard(dir);
  write_bytes(path, forged_entry("cubin", kKey, "{}", "payload"));
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(kMaxEntryBytes + 1)) == 0);  // sparse
  DiskCache cache(dir);
  const VerifyReport report = cache.verify();
  CHECK(report.removed == 1);
  CHECK(mentions(report.reasons, "more than an entry may have"));
}
