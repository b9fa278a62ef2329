// SPDX-License-Identifier: Apache-2.0
// Bundle export, import and read-only opening, including damaged bundles.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "cache/bundle.h"
#include "cache/byte_io.h"
#include "cache/bundle_format.h"
#include "cache/digest.h"
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

/// Where an index item says an entry lies.
struct Placed {
  std::string key_text;
  std::uint64_t offset;
  std::uint64_t size;
};

/// A bundle of `area` (the bytes between header and index) with an index of `items`, every
/// checksum right: what anyone can write without kjit's BundleWriter.
void write_forged_bundle(const std::string& path, const std::string& area,
                         const std::vector<Placed>& items) {
  std::string index;
  ByteWriter index_writer(index);
  for (const Placed& item : items) {
    index_writer.put_blob32("cubin");
    index_writer.put_blob32(digest_hex(item.key_text));
    index_writer.put_u64(item.offset);
    index_writer.put_u64(item.size);
  }
  std::string bytes;
  ByteWriter writer(bytes);
  writer.put_raw("KJITBNDL");
  writer.put_u32(kBundleFormatVersion);
  writer.put_u32(0);
  writer.put_u64(items.size());
  writer.put_u64(kBundleHeaderSize + area.size());
  writer.put_u64(index.size());
  writer.put_u64(checksum64(index));
  writer.put_u64(checksum64(bytes));
  write_bytes(path, bytes + area + index);
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

TEST_CASE("a FIFO named as a bundle is refused at once, by the reader and by import") {
  TempDir tmp;
  const std::string fifo = tmp / "bundle.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // In children with a deadline: before the fix, open() waited for a writer forever.
  CHECK(exits_cleanly_within(20, [&] {
    Bundle bundle(fifo);
    if (bundle.valid() || bundle.problem().find("is a FIFO, not a regular file") == std::string::npos)
      ::_exit(3);
  }));
  CHECK(exits_cleanly_within(20, [&] {
    DiskCache target(tmp / "target");
    try {
      target.import_bundle(fifo);
    } catch (const kjit::Error& e) {
      if (std::string(e.what()).find("FIFO") != std::string::npos) ::_exit(0);
    }
    ::_exit(3);
  }));
  Bundle folder(tmp.path());
  CHECK(folder.problem().find("is a directory") != std::string::npos);
}

TEST_CASE("export replaces only a regular file of the user's, or writes a new one") {
  TempDir tmp;
  DiskCache cache(tmp / "cache");
  REQUIRE(cache.put("cubin", key_of(0), payload_of(0)));
  const std::string target = tmp / "target.txt";
  write_bytes(target, "the link's target");
  const std::string link = tmp / "link.kjb";
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  const std::string fifo = tmp / "fifo.kjb";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string folder = tmp / "folder.kjb";
  REQUIRE(::mkdir(folder.c_str(), 0700) == 0);
  for (const auto& item : {std::pair<std::string, std::string>{link, "a symbolic link"},
                           {fifo, "a FIFO"},
                           {folder, "a directory"}}) {
    const std::string& path = item.first;
    const std::string& what = item.second;
    CAPTURE(path);
    try {
      cache.export_bundle(path);
      FAIL("export over " << what << " must be refused");
    } catch (const kjit::Error& e) {
      CHECK(e.status() == kjit::Status::kErrorCacheIo);
      CHECK(std::string(e.what()).find("is " + what) != std::string::npos);
    }
  }
  struct stat st {};
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(read_bytes(target) == "the link's target");
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(find_files(tmp.path(), ".tmp").empty());

  const std::string mine = tmp / "mine.kjb";
  write_bytes(mine, "an older bundle of mine");
  CHECK(cache.export_bundle(mine) == 1);
  CHECK(Bundle(mine).valid());
  if (running_as_root()) {
    // Root can make a file of another user to try.
    const std::string theirs = tmp / "theirs.kjb";
    write_bytes(theirs, "another user's file");
    REQUIRE(::chown(theirs.c_str(), 12345, 12345) == 0);
    CHECK_THROWS_AS(cache.export_bundle(theirs), kjit::Error);
    CHECK(read_bytes(theirs) == "another user's file");
  } else {
    MESSAGE("not root: the another-user's-file case needs chown, skipped");
  }
}

TEST_CASE("a bundle header claiming a 20 GiB index is refused without allocating it") {
  TempDir tmp;
  const std::string path = make_bundle(tmp);
  std::string bytes = read_bytes(path);
  const std::uint64_t index_size = std::uint64_t{20} << 30;
  const std::uint64_t index_offset = kBundleHeaderSize;
  // Header fields at 16 (count), 24 (index offset), 32 (index size); checksum over 0..47 at 48.
  auto put_u64 = [&](std::size_t at, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  };
  put_u64(16, 1000);
  put_u64(24, index_offset);
  put_u64(32, index_size);
  put_u64(48, checksum64(std::string_view(bytes).substr(0, 48)));
  write_bytes(path, bytes.substr(0, kBundleHeaderSize));
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(index_offset + index_size)) == 0);  // sparse
  WarningCounter warnings;
  Bundle bundle(path);
  CHECK_FALSE(bundle.valid());
  CHECK_MESSAGE(bundle.problem().find("more than a bundle may have") != std::string::npos,
                bundle.problem());
}

TEST_CASE("an index whose entries overlap, repeat or leave gaps is refused at open") {
  // One index naming a large entry over and over made every open read it once per mention.
  TempDir tmp;
  const std::string path = tmp / "forged.kjb";
  const std::string first = forged_entry("cubin", key_of(0), "{}", std::string(1 << 20, 'x'));
  const std::string second = forged_entry("cubin", key_of(1), "{}", payload_of(1));
  const std::uint64_t at_first = kBundleHeaderSize;
  const std::uint64_t at_second = kBundleHeaderSize + first.size();
  std::string expected;
  SUBCASE("one entry named a thousand times") {
    write_forged_bundle(path, first,
                        std::vector<Placed>(1000, Placed{key_of(0), at_first, first.size()}));
    expected = "does not start where the one before it ends";
  }
  SUBCASE("entries listed out of order") {
    write_forged_bundle(path, first + second,
                        {{key_of(1), at_second, second.size()}, {key_of(0), at_first, first.size()}});
    expected = "does not start where the one before it ends";
  }
  SUBCASE("bytes no entry covers") {
    write_forged_bundle(path, first + "junk", {{key_of(0), at_first, first.size()}});
    expected = "not where the index starts";
  }
  WarningCounter warnings;
  Bundle bundle(path);
  CHECK_FALSE(bundle.valid());
  CHECK_MESSAGE(bundle.problem().find(expected) != std::string::npos, bundle.problem());
}

TEST_CASE("a forged bundle laid out as the writer lays it is read") {
  // The layout rule above refuses nothing BundleWriter makes.
  TempDir tmp;
  const std::string path = tmp / "forged.kjb";
  const std::string first = forged_entry("cubin", key_of(0), "{}", payload_of(0));
  const std::string second = forged_entry("cubin", key_of(1), "{}", payload_of(1));
  write_forged_bundle(path, first + second,
                      {{key_of(0), kBundleHeaderSize, first.size()},
                       {key_of(1), kBundleHeaderSize + first.size(), second.size()}});
  Bundle bundle(path);
  REQUIRE_MESSAGE(bundle.valid(), bundle.problem());
  CHECK(bundle.get("cubin", key_of(1))->payload == payload_of(1));
}
