// SPDX-License-Identifier: Apache-2.0
// The KJIT_* environment as RuntimeOptions reads it, and the rule that decides which launches
// are programmatic dependents of the kernel before them.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "kjit/kjit.h"
#include "kjit/kjit.hpp"
#include "runtime/env.h"
#include "runtime/launch/loaded_kernel.h"

using namespace kjit;

namespace {

// Sets one variable for a scope and restores the previous state.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, previous_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string previous_;
  bool had_ = false;
};

std::string error_of(const char* name, const char* value) {
  ScopedEnv env(name, value);
  try {
    RuntimeOptions::from_environment();
  } catch (const Error& error) {
    CHECK(error.status() == Status::kErrorInvalidArgument);
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("KJIT_PDL turns programmatic dependent launch off; it is on by default") {
  {
    ScopedEnv env("KJIT_PDL", nullptr);
    CHECK(RuntimeOptions::from_environment().dependent_launch);
  }
  for (const char* off : {"0", "off", "false"}) {
    ScopedEnv env("KJIT_PDL", off);
    CHECK_FALSE(RuntimeOptions::from_environment().dependent_launch);
  }
  for (const char* on : {"1", "on", "true"}) {
    ScopedEnv env("KJIT_PDL", on);
    CHECK(RuntimeOptions::from_environment().dependent_launch);
  }
  const std::string error = error_of("KJIT_PDL", "sometimes");
  CHECK(error.find("KJIT_PDL='sometimes'") != std::string::npos);
}

TEST_CASE("an invalid KJIT_TUNE names the variable and the accepted values") {
  const std::string error = error_of("KJIT_TUNE", "always");
  CHECK(error.find("KJIT_TUNE='always'") != std::string::npos);
  CHECK(error.find("first-use") != std::string::npos);
}

TEST_CASE("an unknown KJIT_LOG_LEVEL is named, not read as \"off\"") {
  // spdlog reads any name it does not know as "off", which hid every warning.
  const std::string error = error_of("KJIT_LOG_LEVEL", "loud");
  CHECK(error.find("KJIT_LOG_LEVEL='loud'") != std::string::npos);
  CHECK(error.find("warn") != std::string::npos);
  CHECK(error_of("KJIT_LOG_LEVEL", "debug").empty());
}

TEST_CASE("sizes are parsed with checked arithmetic: too large is refused, never wrapped") {
  CHECK(parse_byte_size("0") == std::uint64_t{0});
  CHECK(parse_byte_size("500M") == std::uint64_t{500} << 20);
  CHECK(parse_byte_size("2G") == std::uint64_t{2} << 30);
  CHECK(parse_byte_size("3TB") == std::uint64_t{3} << 40);
  CHECK(parse_byte_size("18446744073709551615") == UINT64_MAX);
  CHECK(parse_byte_size("16777215T") == std::uint64_t{16777215} << 40);
  // 2^34 G is 2^64 bytes: it used to wrap to 0, which pruned every entry.
  CHECK_FALSE(parse_byte_size("17179869184G"));
  CHECK_FALSE(parse_byte_size("16777216T"));
  CHECK_FALSE(parse_byte_size("18446744073709551616"));
  CHECK_FALSE(parse_byte_size("99999999999999999999999999"));
  for (const char* bad : {"", "G", "-1", "1.5G", "1g", "1 G", "1GiB", "0x10"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_byte_size(bad));
  }
}

TEST_CASE("KJIT_CACHE_MAX_SIZE=0 means no cap; an overflowing size names the variable") {
  {
    ScopedEnv env("KJIT_CACHE_MAX_SIZE", "0");
    CHECK(RuntimeOptions::from_environment().cache_max_bytes == 0);
  }
  const std::string error = error_of("KJIT_CACHE_MAX_SIZE", "17179869184G");
  CHECK(error.find("KJIT_CACHE_MAX_SIZE='17179869184G'") != std::string::npos);
  CHECK(error.find("0: no cap") != std::string::npos);
}

TEST_CASE("KJIT_CACHE_BUNDLE naming a FIFO or a folder: kjit_runtime_create returns at once") {
  char folder[] = "/tmp/kjit-bundle-fifo-XXXXXX";
  REQUIRE(::mkdtemp(folder) != nullptr);
  const std::string fifo = std::string(folder) + "/bundle.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& bundle : {fifo, std::string(folder)}) {
    CAPTURE(bundle);
    ScopedEnv env("KJIT_CACHE_BUNDLE", bundle.c_str());
    ScopedEnv no_disk("KJIT_DISK_CACHE", "0");
    // In a child with a deadline: before the fix, opening the FIFO waited for a writer forever.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      kjit_runtime* rt = nullptr;
      const kjit_status status = kjit_runtime_create(&rt);
      kjit_runtime_destroy(rt);
      ::_exit(status == KJIT_SUCCESS ? 0 : 3);
    }
    int status = -1;
    for (int waited = 0; waited < 2000 && ::waitpid(child, &status, WNOHANG) == 0; ++waited)
      ::usleep(10000);
    const bool finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!finished) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
    }
    CHECK(finished);
  }
  ::unlink(fifo.c_str());
  ::rmdir(folder);
}

TEST_CASE("launches go out as dependents where allowed, persistent grids only in one round") {
  LaunchShape per_row;
  per_row.dependent_launch = true;
  CHECK(launches_as_dependent(per_row, 4096, 16384));
  LaunchShape not_allowed;  // the device lacks it, or KJIT_PDL=0
  CHECK_FALSE(launches_as_dependent(not_allowed, 4096, 16384));
  LaunchShape persistent = per_row;
  persistent.persistent = true;
  persistent.cluster = 16;
  CHECK(launches_as_dependent(persistent, 16, 1));             // one cluster, one row
  CHECK(launches_as_dependent(persistent, 7 * 16, 7));         // a row each
  CHECK_FALSE(launches_as_dependent(persistent, 7 * 16, 64));  // 10 rounds
  LaunchShape two_groups = persistent;  // the ring's two consumer groups
  two_groups.dependent_past_one_round = true;
  CHECK(launches_as_dependent(two_groups, 7 * 16, 64));
  two_groups.dependent_launch = false;
  CHECK_FALSE(launches_as_dependent(two_groups, 7 * 16, 64));
  persistent.cluster = 1;
  persistent.rows_per_block = 4;
  CHECK(launches_as_dependent(persistent, 132, 528));
  CHECK_FALSE(launches_as_dependent(persistent, 132, 529));
}
