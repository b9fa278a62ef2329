// SPDX-License-Identifier: Apache-2.0
#include "runtime/compiler/kernel_key.h"

#include <nlohmann/json.hpp>

#include "cache/digest.h"
#include "runtime/compiler/embedded_sources.h"
#include "runtime/compiler/nvrtc.h"

#ifndef KJIT_VERSION
#define KJIT_VERSION "0.0.0"
#endif

namespace kjit {

const char* kjit_version() noexcept { return KJIT_VERSION; }

std::string kernel_key_text(const KernelSpec& spec, int arch) {
  // Ordered JSON: the same inputs always give the same text, and the text is readable in logs.
  nlohmann::ordered_json key = {{"kind", "cubin"},
                                {"header", spec.header},
                                {"kernel", spec.name_expression},
                                {"arch", "sm_" + std::to_string(arch)},
                                {"nvrtc", nvrtc_version()},
                                {"options", fixed_nvrtc_options()},
                                {"sources", embedded_sources_digest()},
                                {"kjit", kjit_version()}};
  return key.dump();
}

std::string kernel_key_digest(const std::string& key_text) { return cache::digest_hex(key_text); }

}  // namespace kjit
