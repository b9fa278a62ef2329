// SPDX-License-Identifier: Apache-2.0
#include "runtime/loaded_kernel.h"

namespace kjit {

std::shared_ptr<const LoadedKernel> load_kernel(std::shared_ptr<const CompiledKernel> compiled,
                                                const LaunchShape& shape) {
  auto loaded = std::make_shared<LoadedKernel>();
  loaded->module = load_module(compiled->cubin.data());
  KJIT_CU(cuModuleGetFunction, &loaded->function, loaded->module.get(),
          compiled->lowered_name.c_str());
  // Past 48 KB of static plus dynamic shared memory a block must opt in, per function; opting
  // in whenever there is dynamic shared memory keeps the boundary out of the picture.
  if (shape.dynamic_smem > 0)
    KJIT_CU(cuFuncSetAttribute, loaded->function,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shape.dynamic_smem);
  if (shape.cluster > 8)
    KJIT_CU(cuFuncSetAttribute, loaded->function,
            CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  loaded->compiled = std::move(compiled);
  return loaded;
}

void Launchable::launch(const RowParams& params, CUstream stream) const {
  const auto grid = static_cast<unsigned>(rowwise_grid(shape, params.rows));
  void* args[] = {const_cast<RowParams*>(&params)};
  if (shape.cluster == 1) {
    KJIT_CU(cuLaunchKernel, kernel->function, grid, 1, 1, static_cast<unsigned>(shape.block), 1, 1,
            static_cast<unsigned>(shape.dynamic_smem), stream, args, nullptr);
    return;
  }
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(shape.cluster);
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(shape.block);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(shape.dynamic_smem);
  config.hStream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  KJIT_CU(cuLaunchKernelEx, &config, kernel->function, args, nullptr);
}

}  // namespace kjit
