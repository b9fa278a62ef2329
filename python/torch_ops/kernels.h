// SPDX-License-Identifier: Apache-2.0
// The CUDA kernels of torch.ops.kjit.* in C++, registered into a torch::Library of kind IMPL
// for the CUDA key; the schemas and fake kernels stay with kjit/torch/_library.py.
#pragma once

#include <torch/library.h>

namespace kjit::torch_ops {

/// softmax, log_softmax, reduce_scale and their out variants.
void register_rowwise_kernels(torch::Library& library);

/// softmax_topk and softmax_topk_out.
void register_topk_kernels(torch::Library& library);

}  // namespace kjit::torch_ops
