// SPDX-License-Identifier: Apache-2.0
// `kjit precompile`: fills the disk cache with the kernels a list of shapes will need, so that
// the first call of a deployment finds its cubin instead of waiting for NVRTC.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/disk_cache.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "cli/spec_file.h"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/launch/cubin_store.h"
#include "runtime/op_tools.h"
#include "runtime/parallel_for.h"

namespace kjit::cli {
namespace {

constexpr const char* kCubinKind = "cubin";

struct PrecompileFlags {
  std::string archs, spec, cache_dir;
  bool tune = false;
  bool json = false;
  unsigned jobs = 0;
};

/// One kernel to have in the cache.
struct Job {
  KernelSpec spec;
  int arch = 0;
  std::string key_text;
};

void require_gpu_for_tuning() {
  if (!gpu_present())
    throw Error(Status::kErrorNoDriver,
                "--tune: tuning times kernels on a GPU and there is none here; precompile without "
                "--tune, or run it on the target GPU");
}

/// Tunes each distinct problem class of the spec on this GPU and stores the records in the
/// cache folder, where the runtime (KJIT_TUNE=cached, the default) finds them.
std::size_t tune_calls(const std::vector<SpecCall>& calls, const std::string& cache_dir) {
  // The records land on disk in this folder whatever KJIT_DISK_CACHE says, as the cubins do.
  RuntimeOptions options = RuntimeOptions::from_environment();
  options.cache_dir = cache_dir;
  options.disk_cache = true;
  Runtime runtime(options);
  bool on_gpu = false;
  const DeviceProps device = target_device(0, &on_gpu);
  std::set<std::string> seen;
  for (const SpecCall& call : calls) {
    const OpTools& tools = op_tools(call["op"].get<std::string>());
    if (!seen.insert(tools.class_key(call, device)).second) continue;
    // As `kjit tune` does: configs an earlier record of this class timed keep their timings, so
    // a re-run (or a grown candidate space) times only what is new.
    TuneRequest request;
    request.reuse_record = request.save = true;
    const TuneSummary report = tools.tune(runtime, call, request);
    const TuneSummary::Candidate *winner = nullptr, *heuristic = nullptr;
    for (const auto& c : report.candidates) {
      if (c.winner) winner = &c;
      if (c.heuristic) heuristic = &c;
    }
    std::fprintf(stderr, "tuned %s: %s %.2f us (heuristic %.2f us), %.1f s\n",
                 report.description.c_str(), winner ? winner->config.c_str() : "?",
                 winner ? winner->timing.median_us : 0.0,
                 heuristic && heuristic->status == "ok" ? heuristic->timing.median_us : 0.0,
                 report.seconds);
  }
  return seen.size();
}

/// "sm_80,sm_90" -> {80, 90}; each must be a target of this NVRTC. Empty: this GPU's arch.
std::vector<int> parse_arch_list(const std::string& text) {
  bool on_gpu = false;
  if (text.empty()) return {target_device(0, &on_gpu).arch};
  std::vector<int> archs;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const int arch = parse_arch(item, "--arch");
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  }
  if (archs.empty()) throw Error(Status::kErrorInvalidArgument, "--arch: no arch given");
  return archs;
}

/// The distinct kernels the calls need on each arch, in arch x call order.
std::vector<Job> plan_jobs(const std::vector<SpecCall>& calls, const std::vector<int>& archs) {
  std::vector<Job> jobs;
  std::unordered_set<std::string> seen;
  for (int arch : archs) {
    // On a GPU of this arch the runtime plans with its real properties; elsewhere nominal ones.
    bool on_gpu = false;
    const DeviceProps device = target_device(arch, &on_gpu);
    const std::string source = on_gpu ? "this GPU, " + device.name : device.name;
    std::fprintf(stderr, "planning sm_%d with %s (%d SMs)\n", arch, source.c_str(),
                 device.sm_count);
    for (const SpecCall& call : calls) {
      KernelSpec spec;
      try {
        spec = op_tools(call["op"].get<std::string>()).plan(call, device, "auto").spec;
      } catch (const Error& e) {
        throw Error(Status::kErrorInvalidArgument, "--spec: " + describe(call) + ": " + e.what());
      }
      std::string key_text = kernel_key_text(spec, arch);
      if (seen.insert(key_text).second) jobs.push_back({spec, arch, std::move(key_text)});
    }
  }
  return jobs;
}

/// Counts outcomes and prints one progress line per finished job; shared by the workers.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total) {}

  void compiled(const Job& job, double ms) {
    line("compiled " + target(job) + format(" (%.0f ms)", ms));
    ++compiled_;
  }
  void cached(const Job& job) {
    line("cached " + target(job));
    ++cached_;
  }
  void failed(const Job& job, const std::string& why) {
    line("failed " + target(job) + ": " + why);
    ++failed_;
  }
  std::size_t compiled_count() const { return compiled_; }
  std::size_t cached_count() const { return cached_; }
  std::size_t failed_count() const { return failed_; }

 private:
  static std::string target(const Job& job) {
    return job.spec.name_expression + " for sm_" + std::to_string(job.arch);
  }
  void line(const std::string& text) {
    std::lock_guard<std::mutex> guard(mutex_);
    ++done_;
    std::fprintf(stderr, "[%zu/%zu] %s\n", done_, total_, text.c_str());
  }

  std::mutex mutex_;
  std::size_t total_, done_ = 0;
  std::atomic<std::size_t> compiled_{0}, cached_{0}, failed_{0};
};

/// Compiles one job, or finds it cached. A failing kernel is counted, not thrown: it must not
/// stop the others.
void run_job(CubinStore& store, const Job& job, Progress& progress) {
  try {
    const long before = store.compiles();
    auto kernel = store.get(job.spec, job.arch);
    if (store.compiles() > before) {
      progress.compiled(job, kernel->compile_ms);
    } else {
      progress.cached(job);
    }
  } catch (const std::exception& e) {
    progress.failed(job, e.what());
  }
}

/// Each worker has its own store, so that the store's compile counter tells, per job, whether
/// NVRTC ran (another process may have filled the entry).
void run_jobs(const EnvSettings& settings, const std::vector<Job>& jobs, int threads,
              Progress& progress) {
  std::vector<std::unique_ptr<CubinStore>> stores(
      static_cast<std::size_t>(parallel_workers(jobs.size(), threads)));
  parallel_for_workers(jobs.size(), threads, [&](std::size_t i, int worker) {
    std::unique_ptr<CubinStore>& store = stores[static_cast<std::size_t>(worker)];
    if (!store) store = std::make_unique<CubinStore>(settings);
    run_job(*store, jobs[i], progress);
  });
}

/// Jobs without a valid entry on disk after the run (writes failed, or the size cap pruned
/// them): each is read back as the runtime would, so a folder or a torn file at an entry's
/// name is not counted as stored.
std::size_t missing_entries(cache::DiskCache& disk, const std::vector<Job>& jobs) {
  std::size_t missing = 0;
  for (const Job& job : jobs)
    if (!disk.get(kCubinKind, job.key_text)) ++missing;
  return missing;
}

void run_precompile(const PrecompileFlags& flags) {
  if (flags.tune) require_gpu_for_tuning();
  const std::vector<SpecCall> calls = load_spec_file(flags.spec);
  const std::vector<int> archs = parse_arch_list(flags.archs);
  EnvSettings settings = disk_cache_settings(flags.cache_dir);
  settings.jit = true;  // filling the cache is the point, whatever KJIT_JIT says
  auto disk = open_disk_cache(flags.cache_dir, true);

  const std::vector<Job> jobs = plan_jobs(calls, archs);
  const int threads = parallel_workers(jobs.size(), static_cast<int>(flags.jobs));
  const auto start = std::chrono::steady_clock::now();
  Progress progress(jobs.size());
  run_jobs(settings, jobs, threads, progress);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const nlohmann::ordered_json summary = {
      {"cache_dir", disk->dir()}, {"kernels", jobs.size()}, {"calls", calls.size()},
      {"compiled", progress.compiled_count()}, {"cached", progress.cached_count()},
      {"failed", progress.failed_count()}, {"seconds", seconds}, {"threads", threads}};
  if (!flags.json)
    std::printf(
        "%zu kernels (%zu calls) in %s: %zu compiled, %zu already cached, %zu failed "
        "(%.1f s, %d threads)\n",
        jobs.size(), calls.size(), disk->dir().c_str(), progress.compiled_count(),
        progress.cached_count(), progress.failed_count(), seconds, threads);
  if (progress.failed_count() > 0)
    throw Error(Status::kErrorCompile,
                std::to_string(progress.failed_count()) + " kernels failed to compile");
  if (std::size_t missing = missing_entries(*disk, jobs); missing > 0)
    throw Error(Status::kErrorCacheIo,
                std::to_string(missing) + " kernels are not in '" + disk->dir() +
                    "' afterwards (write failure, or KJIT_CACHE_MAX_SIZE below their size)");
  const std::size_t tuned = flags.tune ? tune_calls(calls, disk->dir()) : 0;
  if (flags.json) {
    nlohmann::ordered_json out = summary;
    out["tuned"] = tuned;
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else if (flags.tune) {
    std::printf("%zu shapes tuned\n", tuned);
  }
}

}  // namespace

void add_precompile_command(CLI::App& app) {
  auto flags = std::make_shared<PrecompileFlags>();
  auto* command = app.add_subcommand(
      "precompile",
      "Compile the kernels a list of shapes needs into the disk cache (no GPU needed)");
  command->add_option("--arch", flags->archs, "targets, e.g. sm_80,sm_90 (default: this GPU)");
  command
      ->add_option("--spec", flags->spec,
                   "JSON shape list: {\"ops\": [...], \"dtypes\": [...], \"cols\": [...], "
                   "\"rows\": [...]} or a list of such objects; with \"softmax_topk\" among the "
                   "ops, also \"k\": [...] and optionally \"index_dtypes\": [\"i32\", \"i64\"]")
      ->required();
  command->add_flag("--tune", flags->tune, "also tune each shape on this GPU and store the records");
  command->add_flag("--json", flags->json, "print the summary as JSON (progress stays on stderr)");
  command->add_option("-j,--jobs", flags->jobs, "compile threads (default: one per core)");
  add_cache_dir_option(*command, flags->cache_dir);
  command->callback([flags] { run_precompile(*flags); });
}

}  // namespace kjit::cli
