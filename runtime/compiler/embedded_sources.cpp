// SPDX-License-Identifier: Apache-2.0
#include "runtime/compiler/embedded_sources.h"

#include "cache/digest.h"

namespace kjit {

const std::string& embedded_sources_digest() {
  static const std::string digest = [] {
    std::string all;
    for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it) {
      all.append(it->name).push_back('\0');
      all.append(it->text).push_back('\0');
    }
    return cache::digest_hex(all);
  }();
  return digest;
}

}  // namespace kjit
