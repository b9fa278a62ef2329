// SPDX-License-Identifier: Apache-2.0
#include "python/src/precompile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "cli/shapes.h"
#include "runtime/compiler/kernel_key.h"
#include "runtime/launch/cubin_store.h"
#include "runtime/op_tools.h"

namespace kjit::python {
namespace {

struct Job {
  KernelSpec spec;
  int arch = 0;
};

/// The distinct kernels, planned with this GPU's properties where its arch is asked for, else
/// with the arch's nominal ones.
std::vector<Job> plan_jobs(const std::vector<nlohmann::ordered_json>& calls,
                           const std::vector<int>& archs) {
  std::vector<Job> jobs;
  std::unordered_set<std::string> seen;
  for (int arch : archs) {
    bool on_gpu = false;
    const DeviceProps device = cli::target_device(arch, &on_gpu);
    for (const auto& call : calls) {
      KernelSpec spec = op_tools(call["op"].get<std::string>()).plan(call, device, "auto").spec;
      if (seen.insert(kernel_key_text(spec, arch)).second) jobs.push_back({std::move(spec), arch});
    }
  }
  return jobs;
}

struct Outcome {
  std::mutex mutex;
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  std::atomic<std::size_t> compiled{0}, cached{0};
};

/// Takes jobs until none is left; a store per worker, so its compile counter tells whether NVRTC
/// ran for each job.
void work(const EnvSettings& settings, const std::vector<Job>& jobs, std::atomic<std::size_t>& next,
          Outcome& outcome) {
  CubinStore store(settings);
  for (std::size_t i = next++; i < jobs.size(); i = next++) {
    try {
      const long before = store.compiles();
      store.get(jobs[i].spec, jobs[i].arch);
      ++(store.compiles() > before ? outcome.compiled : outcome.cached);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> guard(outcome.mutex);
      outcome.failed.push_back({{"kernel", jobs[i].spec.name_expression},
                                {"arch", "sm_" + std::to_string(jobs[i].arch)},
                                {"error", e.what()}});
    }
  }
}

}  // namespace

nlohmann::ordered_json precompile(const std::vector<nlohmann::ordered_json>& calls,
                                  const std::vector<int>& archs, const EnvSettings& settings,
                                  unsigned threads) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Job> jobs = plan_jobs(calls, archs);
  threads = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(threads, jobs.size())));
  Outcome outcome;
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back([&] { work(settings, jobs, next, outcome); });
  work(settings, jobs, next, outcome);
  for (std::thread& thread : pool) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"kernels", jobs.size()},   {"calls", calls.size()},
          {"compiled", outcome.compiled.load()}, {"cached", outcome.cached.load()},
          {"failed", outcome.failed}, {"cache_dir", settings.cache_dir},
          {"seconds", seconds},       {"threads", threads}};
}

}  // namespace kjit::python
