// SPDX-License-Identifier: Apache-2.0
// Kernels must not leave lines marked "evict last" in L2: such lines outlive the kernel, change
// the caller's L2 and every later timing in the process (l2_hints.cuh has the measurements).
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "runtime/compiler/embedded_sources.h"

namespace kjit {
namespace {

TEST_CASE("no kernel source asks L2 to keep lines past the kernel") {
  int sources = 0;
  for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it, ++sources) {
    CAPTURE(std::string(it->name));
    CHECK(it->text.find("evict_last") == std::string_view::npos);
    CHECK(it->text.find("cudaAccessPropertyPersisting") == std::string_view::npos);
  }
  CHECK(sources > 10);  // the sources were there to search
}

TEST_CASE("the sources spell cache policies the way the check above searches for them") {
  // The check above looks for the PTX spelling; if the hints moved to another spelling, it
  // would pass without looking at anything.
  bool found = false;
  for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it)
    found = found || it->text.find("createpolicy.fractional.L2::evict_first") != std::string_view::npos;
  CHECK(found);
}

}  // namespace
}  // namespace kjit
