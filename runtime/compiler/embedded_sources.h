// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace kjit {

/// One kernel source file embedded into the library at build time.
struct EmbeddedSource {
  std::string_view name;  ///< file name, e.g. "warp.cuh"; also its #include name under NVRTC
  std::string_view text;
};

const EmbeddedSource* embedded_sources_begin();
const EmbeddedSource* embedded_sources_end();

/// Digest over every embedded file's name and text: part of every kernel key.
const std::string& embedded_sources_digest();

}  // namespace kjit
