// SPDX-License-Identifier: Apache-2.0
// Launch arguments of the output comparison kernel, shared by the kernel (under NVRTC) and the
// tuner on the host; plain types only.
#pragma once

namespace kjit {

struct CompareParams {
  const void* got;
  const void* reference;
  long long elements;
  float relative;
  float absolute;
  unsigned long long* first_bad;  ///< holds ~0 before the launch; the smallest bad index after
};

}  // namespace kjit
