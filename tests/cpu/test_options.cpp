// SPDX-License-Identifier: Apache-2.0
// The KJIT_* environment as RuntimeOptions reads it, and the rule that decides which launches
// are programmatic dependents of the kernel before them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "kjit/kjit.hpp"
#include "runtime/loaded_kernel.h"

using namespace kjit;

namespace {

// Sets one variable for a scope and restores the previous state.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, previous_.c_str(), 1);
    else unsetenv(name_);
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

TEST_CASE("only non-persistent grids on a device that supports it launch as dependents") {
  DeviceProps hopper;
  hopper.arch = 90;
  hopper.dependent_launch = true;
  DeviceProps ampere;
  ampere.arch = 80;
  LaunchShape per_row;
  LaunchShape persistent;
  persistent.persistent = true;
  CHECK(launches_as_dependent(per_row, hopper, true));
  CHECK_FALSE(launches_as_dependent(per_row, hopper, false));
  CHECK_FALSE(launches_as_dependent(per_row, ampere, true));
  CHECK_FALSE(launches_as_dependent(persistent, hopper, true));
}
