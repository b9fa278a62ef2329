// SPDX-License-Identifier: Apache-2.0
#include "runtime/driver/cluster_residency.h"

#include <map>
#include <mutex>
#include <utility>

#include "runtime/driver/handles.h"

namespace kjit {
namespace {

// An empty kernel: the driver compiles the PTX for whatever sm_90 or later GPU loads it.
constexpr char kProbePtx[] =
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry kjit_cluster_probe()\n"
    "{\n"
    "\tret;\n"
    "}\n";

/// The probe's answer, or 0 on any failure (the caller falls back to a table).
int ask_driver(int blocks, int max_smem_per_block) {
  const CudaApi& api = cuda();
  CUmodule raw = nullptr;
  if (api.cuModuleLoadData(&raw, kProbePtx) != CUDA_SUCCESS) return 0;
  const Module module(raw);
  CUfunction function = nullptr;
  if (api.cuModuleGetFunction(&function, module.get(), "kjit_cluster_probe") != CUDA_SUCCESS ||
      api.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_smem_per_block) !=
          CUDA_SUCCESS ||
      api.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) != CUDA_SUCCESS)
    return 0;
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(blocks);
  cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(blocks);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(max_smem_per_block);  // one block an SM
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  if (api.cuOccupancyMaxActiveClusters(&clusters, function, &config) != CUDA_SUCCESS) return 0;
  return clusters;
}

}  // namespace

int resident_clusters(CUdevice device, int blocks, int max_smem_per_block) {
  CUcontext context = nullptr;
  CUdevice current = 0;
  if (cuda().cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr ||
      cuda().cuCtxGetDevice(&current) != CUDA_SUCCESS || current != device)
    return 0;
  static std::mutex mutex;
  static std::map<std::pair<CUdevice, int>, int> answers;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, blocks);
  if (auto found = answers.find(key); found != answers.end()) return found->second;
  const int clusters = ask_driver(blocks, max_smem_per_block);
  answers.emplace(key, clusters);
  return clusters;
}

}  // namespace kjit
