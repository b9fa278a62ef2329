// SPDX-License-Identifier: Apache-2.0
// Marks the layout code that the kernels and the host's planning share (row_layout.cuh,
// ring_layout.cuh, topk_shape.cuh): __host__ __device__ under a CUDA compiler, nothing under
// the host's C++ compiler, which includes those headers as plain C++.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KJIT_HOST_DEVICE __host__ __device__
#else
#define KJIT_HOST_DEVICE
#endif
