// SPDX-License-Identifier: Apache-2.0
#include "runtime/launch/loaded_kernel.h"

namespace kjit {
namespace {

CUlaunchAttribute cluster_dimension(const LaunchShape& shape) {
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(shape.cluster);
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  return cluster;
}

CUlaunchAttribute programmatic_serialization() {
  CUlaunchAttribute dependent{};
  dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  dependent.value.programmaticStreamSerializationAllowed = 1;
  return dependent;
}

/// A launch of `grid` blocks of `shape` with `count` attributes.
CUlaunchConfig launch_config(const LaunchShape& shape, unsigned grid, CUstream stream,
                             CUlaunchAttribute* attributes, unsigned count) {
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(shape.block);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(shape.dynamic_smem);
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  return config;
}

/// How many clusters of this kernel the device holds at once: the grid of the resident,
/// row-walking cluster kernels. Falls back to one per SM group when the driver cannot say.
int active_clusters(CUfunction function, const LaunchShape& shape) {
  CUlaunchAttribute attribute = cluster_dimension(shape);
  const CUlaunchConfig config =
      launch_config(shape, static_cast<unsigned>(shape.cluster), nullptr, &attribute, 1);
  int clusters = 0;
  if (cuda().cuOccupancyMaxActiveClusters(&clusters, function, &config) != CUDA_SUCCESS ||
      clusters < 1)
    return 0;
  return clusters;
}

/// Resource usage as the driver sees the loaded function.
ResourceUsage usage_of(CUfunction function) {
  auto attribute = [function](CUfunction_attribute which) {
    int value = 0;
    KJIT_CU(cuFuncGetAttribute, &value, which, function);
    return value;
  };
  ResourceUsage usage;
  usage.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
  usage.stack_frame = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);  // spills live here too
  usage.static_smem = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  usage.found = true;
  return usage;
}

}  // namespace

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
  if (shape.cluster > 1 || shape.persistent)
    loaded->max_active_clusters = active_clusters(loaded->function, shape);
  loaded->usage = compiled->usage.found ? compiled->usage : usage_of(loaded->function);
  loaded->compiled = std::move(compiled);
  return loaded;
}

bool launches_as_dependent(const LaunchShape& shape, std::int64_t grid, std::int64_t rows) noexcept {
  if (!shape.dependent_launch) return false;
  if (!shape.persistent) return true;
  // A persistent grid launched early lands its blocks wherever the kernel before it left room,
  // and keeps that placement for every round over the rows, which measured slower; with one
  // round there is nothing to keep. The exception: the ring's two consumer groups, which set up
  // their barriers and cluster before waiting on the kernel before them, so a cluster launched
  // early is ready when its rows are (docs/experiments/prefetch-and-dependent-launch.md).
  if (shape.dependent_past_one_round) return true;
  return grid / shape.cluster * shape.rows_per_block >= rows;
}

void Launchable::launch_blocks(void* argument_block, unsigned grid, CUstream stream,
                               bool dependent) const {
  void* args[] = {argument_block};
  CUlaunchAttribute attributes[2];
  unsigned count = 0;
  if (shape.cluster > 1) attributes[count++] = cluster_dimension(shape);
  if (dependent) attributes[count++] = programmatic_serialization();
  if (count == 0) {
    KJIT_CU(cuLaunchKernel, kernel->function, grid, 1, 1, static_cast<unsigned>(shape.block), 1, 1,
            static_cast<unsigned>(shape.dynamic_smem), stream, args, nullptr);
    return;
  }
  const CUlaunchConfig config = launch_config(shape, grid, stream, attributes, count);
  KJIT_CU(cuLaunchKernelEx, &config, kernel->function, args, nullptr);
}

}  // namespace kjit
