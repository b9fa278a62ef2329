// SPDX-License-Identifier: Apache-2.0
#include "runtime/launch/cubin_store.h"

#include <nlohmann/json.hpp>

#include "cache/layered_cache.h"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/log.h"

namespace kjit {
namespace {

constexpr const char* kCubinKind = "cubin";

nlohmann::json metadata_of(const CompiledKernel& kernel) {
  nlohmann::json meta = {{"header", kernel.spec.header},
                         {"kernel", kernel.spec.name_expression},
                         {"arch", kernel.arch},
                         {"lowered_name", kernel.lowered_name},
                         {"compile_ms", kernel.compile_ms}};
  // Only a real ptxas report is kept: NVRTC answers from the CUDA compute cache without one.
  if (kernel.usage.found) {
    meta["registers"] = kernel.usage.registers;
    meta["spill_stores"] = kernel.usage.spill_stores;
    meta["spill_loads"] = kernel.usage.spill_loads;
    meta["stack_frame"] = kernel.usage.stack_frame;
    meta["static_smem"] = kernel.usage.static_smem;
  }
  return meta;
}

/// Rebuilds a CompiledKernel from a cache entry; nullptr when its metadata is incomplete.
std::shared_ptr<const CompiledKernel> from_entry(const cache::Entry& entry, const KernelSpec& spec,
                                                 int arch, const std::string& key_text) {
  const cache::EntryMetadata& facts = entry.facts;
  // An entry without the kernel's lowered name could never be launched: a miss, compiled again.
  if (!facts.lowered_name || facts.lowered_name->empty() || entry.payload.empty()) return nullptr;
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->spec = spec;
  kernel->arch = arch;
  kernel->key_text = key_text;
  kernel->key_digest = kernel_key_digest(key_text);
  kernel->cubin.assign(entry.payload.begin(), entry.payload.end());
  kernel->lowered_name = *facts.lowered_name;
  kernel->usage.registers = facts.registers.value_or(0);
  kernel->usage.spill_stores = facts.spill_stores.value_or(0);
  kernel->usage.spill_loads = facts.spill_loads.value_or(0);
  kernel->usage.stack_frame = facts.stack_frame.value_or(0);
  kernel->usage.static_smem = facts.static_smem.value_or(0);
  kernel->usage.found = facts.registers.has_value();
  return kernel;
}

}  // namespace

CubinStore::CubinStore(const EnvSettings& settings)
    : jit_(settings.jit), disk_(cache::LayeredCache::from_settings(settings)) {}

CubinStore::~CubinStore() = default;

std::shared_ptr<const CompiledKernel> CubinStore::get(const KernelSpec& spec, int arch) {
  const std::string key_text = kernel_key_text(spec, arch);
  return memory_.get_or_make(key_text, [&] { return load_or_compile(spec, arch, key_text); });
}

std::shared_ptr<const CompiledKernel> CubinStore::load_or_compile(const KernelSpec& spec, int arch,
                                                                  const std::string& key_text) {
  auto cached = [&]() -> std::shared_ptr<const CompiledKernel> {
    auto entry = disk_->get(kCubinKind, key_text);
    return entry ? from_entry(*entry, spec, arch, key_text) : nullptr;
  };
  if (auto hit = cached()) return hit;
  if (!jit_)
    throw Error(Status::kErrorNotFound, "KJIT_JIT=0 and no cached cubin for " +
                                            spec.name_expression + " on sm_" + std::to_string(arch) +
                                            " (precompile it with `kjit precompile`)");
  // Another process may be compiling the same key: wait for its lock, then look again.
  cache::KeyLock lock = disk_->lock(kCubinKind, key_text);
  if (auto hit = cached()) return hit;
  log().info("compiling {} for sm_{} (first use; about a second)", spec.name_expression, arch);
  auto kernel = std::make_shared<CompiledKernel>(compile_kernel(spec, arch));
  ++compiles_;
  log().debug("compiled {} in {:.0f} ms: {} registers, {} bytes spilled", spec.name_expression,
              kernel->compile_ms, kernel->usage.registers,
              kernel->usage.spill_stores + kernel->usage.spill_loads);
  const std::string payload(kernel->cubin.begin(), kernel->cubin.end());
  disk_->put(kCubinKind, key_text, payload, metadata_of(*kernel));
  return kernel;
}

}  // namespace kjit
