// SPDX-License-Identifier: Apache-2.0
// The bundle-then-disk lookup order and the read-only bundle layer.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "cache/layered_cache.h"
#include "runtime/env.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

const std::string kShared = "key-in-both-layers";

std::string make_bundle(const TempDir& tmp) {
  DiskCache source(tmp / "source");
  REQUIRE(source.put("cubin", kShared, "from bundle"));
  REQUIRE(source.put("cubin", "bundle-only", "bundle payload"));
  const std::string path = tmp / "deploy.kjb";
  REQUIRE(source.export_bundle(path) == 2);
  return path;
}

}  // namespace

TEST_CASE("the bundle is consulted first and never written") {
  TempDir tmp;
  const std::string bundle_path = make_bundle(tmp);
  const std::string before = read_bytes(bundle_path);
  struct stat st_before {};
  REQUIRE(::stat(bundle_path.c_str(), &st_before) == 0);

  LayeredCache cache(tmp / "disk", bundle_path, 0, true);
  REQUIRE(cache.bundle());
  REQUIRE(cache.disk());
  REQUIRE(cache.disk()->put("cubin", kShared, "from disk"));
  CHECK(cache.get("cubin", kShared)->payload == "from bundle");
  CHECK(cache.get("cubin", "bundle-only")->payload == "bundle payload");

  CHECK(cache.put("cubin", "new", "compiled"));
  CHECK(cache.get("cubin", "new")->payload == "compiled");
  CHECK(cache.disk()->get("cubin", "new"));
  CHECK_FALSE(cache.bundle()->get("cubin", "new"));
  CHECK(cache.lock("cubin", "new").held());

  struct stat st_after {};
  REQUIRE(::stat(bundle_path.c_str(), &st_after) == 0);
  CHECK(read_bytes(bundle_path) == before);
  CHECK(st_after.st_mtim.tv_sec == st_before.st_mtim.tv_sec);
  CHECK(st_after.st_mtim.tv_nsec == st_before.st_mtim.tv_nsec);
}

TEST_CASE("bundle only: hits come from the bundle, puts are refused, locks are no-ops") {
  TempDir tmp;
  LayeredCache cache("", make_bundle(tmp), 0, true);
  CHECK(cache.disk() == nullptr);
  CHECK(cache.get("cubin", kShared)->payload == "from bundle");
  CHECK_FALSE(cache.get("cubin", "absent"));
  CHECK_FALSE(cache.put("cubin", "absent", "p"));
  CHECK_FALSE(cache.lock("cubin", "absent").held());
}

TEST_CASE("no layers: every get misses and every put is refused") {
  TempDir tmp;
  LayeredCache cache(tmp / "disk", "", 0, /*disk_enabled=*/false);
  CHECK(cache.bundle() == nullptr);
  CHECK(cache.disk() == nullptr);
  CHECK_FALSE(cache.get("cubin", kShared));
  CHECK_FALSE(cache.put("cubin", kShared, "p"));
  CHECK_FALSE(cache.lock("cubin", kShared).held());
  CHECK(find_files(tmp.path(), ".bin").empty());
}

TEST_CASE("a damaged bundle leaves the disk layer working") {
  TempDir tmp;
  write_bytes(tmp / "bad.kjb", "garbage");
  WarningCounter warnings;
  LayeredCache cache(tmp / "disk", tmp / "bad.kjb", 0, true);
  CHECK(warnings.count() == 1);
  CHECK(cache.put("cubin", "k", "p"));
  CHECK(cache.get("cubin", "k")->payload == "p");
}

TEST_CASE("from_settings wires the environment settings through") {
  TempDir tmp;
  kjit::EnvSettings settings;
  settings.cache_dir = tmp / "env-cache";
  settings.cache_bundle = make_bundle(tmp);
  settings.cache_max_bytes = 1 << 20;
  settings.disk_cache = true;
  auto cache = LayeredCache::from_settings(settings);
  REQUIRE(cache->bundle());
  REQUIRE(cache->disk());
  CHECK(cache->disk()->dir() == settings.cache_dir);
  CHECK(cache->get("cubin", kShared)->payload == "from bundle");
}
