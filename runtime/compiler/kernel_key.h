// SPDX-License-Identifier: Apache-2.0
// The identity of a cubin: everything that changes the machine code.
#pragma once

#include <string>

#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace kjit {

/// Canonical text of a cubin key: the kernel's instantiation, the target arch, the NVRTC
/// version and options, the embedded sources' digest, and kjit's version.
std::string kernel_key_text(const KernelSpec& spec, int arch);

/// Short stable file-name-safe digest of a key text.
std::string kernel_key_digest(const std::string& key_text);

/// kjit's own version, e.g. "0.1.0".
const char* kjit_version() noexcept;

}  // namespace kjit
