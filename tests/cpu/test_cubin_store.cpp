// SPDX-License-Identifier: Apache-2.0
// The cubin store: memory, then the disk cache, then NVRTC; what comes back from disk is the
// same kernel with the same resource report, and a second process-like store compiles nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/driver/nominal_device.h"
#include "kjit/error.hpp"
#include "cache/disk_cache.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/launch/cubin_store.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace {

std::string fresh_dir() {
  char pattern[] = "/tmp/kjit-cubin-store-XXXXXX";
  const char* made = mkdtemp(pattern);
  REQUIRE(made != nullptr);
  return made;
}

kjit::KernelSpec sample_spec() {
  kjit::RowwiseProblem problem{kjit::RowOp::kLogSoftmax, kjit::DType::kBF16, kjit::DType::kBF16,
                               64, 4097, 1};
  const auto config = kjit::choose_rowwise_config(problem, kjit::nominal_device(90));
  return kjit::rowwise_kernel_spec(problem, config);
}

}  // namespace

TEST_CASE("a cubin read back from the disk cache keeps its resource report") {
  const std::string dir = fresh_dir();
  kjit::EnvSettings settings;
  settings.cache_dir = dir;
  settings.disk_cache = true;
  const kjit::KernelSpec spec = sample_spec();

  kjit::CubinStore first(settings);
  auto compiled = first.get(spec, 90);
  CHECK(first.compiles() == 1);
  CHECK(compiled->usage.found);
  CHECK(compiled->usage.registers > 0);
  CHECK(first.get(spec, 90) == compiled);  // memory hit: the same object
  CHECK(first.compiles() == 1);

  kjit::CubinStore second(settings);  // a new process would start like this
  auto loaded = second.get(spec, 90);
  CHECK(second.compiles() == 0);
  CHECK(loaded->cubin == compiled->cubin);
  CHECK(loaded->lowered_name == compiled->lowered_name);
  CHECK(loaded->usage.registers == compiled->usage.registers);
  CHECK(loaded->usage.static_smem == compiled->usage.static_smem);
  CHECK(loaded->compile_ms == 0.0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("with KJIT_JIT=0 a cubin missing from every cache is a clear error") {
  const std::string dir = fresh_dir();
  kjit::EnvSettings settings;
  settings.cache_dir = dir;
  settings.jit = false;
  kjit::CubinStore store(settings);
  try {
    store.get(sample_spec(), 90);
    FAIL("expected an error");
  } catch (const kjit::Error& error) {
    CHECK(error.status() == kjit::Status::kErrorNotFound);
    CHECK(std::string(error.what()).find("KJIT_JIT=0") != std::string::npos);
  }
  CHECK(store.compiles() == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an entry without the kernel's lowered name is a miss, compiled again") {
  const std::string dir = fresh_dir();
  kjit::EnvSettings settings;
  settings.cache_dir = dir;
  settings.disk_cache = true;
  const kjit::KernelSpec spec = sample_spec();
  {
    kjit::CubinStore first(settings);
    first.get(spec, 90);
  }
  // The same entry with its lowered name emptied, as a forger could leave it: it could never
  // be launched, so it must not count as cached.
  kjit::cache::DiskCache disk(dir);
  const std::string key = kjit::kernel_key_text(spec, 90);
  auto entry = disk.get("cubin", key);
  REQUIRE(entry);
  nlohmann::json metadata = entry->metadata;
  metadata["lowered_name"] = "";
  REQUIRE(disk.put("cubin", key, entry->payload, metadata));
  kjit::CubinStore second(settings);
  auto kernel = second.get(spec, 90);
  CHECK(second.compiles() == 1);
  CHECK_FALSE(kernel->lowered_name.empty());
  std::filesystem::remove_all(dir);
}
