// SPDX-License-Identifier: Apache-2.0
// `kjit tune`: tunes one call's class on this GPU now and prints every candidate, fastest first.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/call_flags.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "runtime/op_tools.h"

namespace kjit::cli {
namespace {

struct TuneFlags {
  CallFlags call;
  bool json = false;
  bool save = false;
  bool full = false;
  bool time_all = false;
  std::string cache_dir;
};

/// Every candidate, fastest first and failed ones last, the winner marked * and the heuristic's
/// pick h; then the winner beside the heuristic.
void print_table(const TuneSummary& report) {
  std::printf("%s on %s: %zu candidates in %.2f s (setup %.2f, compile %.2f, check %.2f, "
              "timing %.2f)\n\n",
              report.description.c_str(), report.device.c_str(), report.candidates.size(),
              report.seconds, report.phases.setup, report.phases.compile, report.phases.check,
              report.phases.timing);
  using Candidate = TuneSummary::Candidate;
  std::vector<const Candidate*> order;
  for (const auto& c : report.candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) {
    const bool a_ok = a->status == "ok", b_ok = b->status == "ok";
    if (a_ok != b_ok) return a_ok;
    return a_ok && a->timing.median_us < b->timing.median_us;
  });
  Table table({"", "config", "median_us", "p20_us", "p80_us", "GB/s", "status"});
  const Candidate *winner = nullptr, *heuristic = nullptr;
  for (const Candidate* c : order) {
    if (c->winner) winner = c;
    if (c->heuristic) heuristic = c;
    const bool ok = c->status == "ok";
    const std::string status = c->status.substr(0, 80) + (c->reused ? " (earlier run)" : "");
    table.add({std::string(c->winner ? "*" : "") + (c->heuristic ? "h" : ""), c->config,
               ok ? format("%.2f", c->timing.median_us) : "-",
               ok ? format("%.2f", c->timing.p20_us) : "-",
               ok ? format("%.2f", c->timing.p80_us) : "-",
               ok ? format("%.0f", report.moved_bytes / (c->timing.median_us * 1e3)) : "-", status});
  }
  table.print();
  if (heuristic && winner && heuristic->status == "ok")
    std::printf("\n* winner %.2f us; h heuristic %.2f us (%.2fx)\n", winner->timing.median_us,
                heuristic->timing.median_us, heuristic->timing.median_us / winner->timing.median_us);
}

void run_tune(const TuneFlags& flags) {
  const nlohmann::ordered_json call = call_of(flags.call);
  const OpTools& tools = op_tools(call["op"].get<std::string>());
  tools.check(call);  // a bad call is named before any GPU work
  if (!gpu_present())
    throw Error(Status::kErrorNoDriver, "kjit tune times kernels on a GPU and there is none here");
  RuntimeOptions options = RuntimeOptions::from_environment();
  if (!flags.cache_dir.empty()) options.cache_dir = flags.cache_dir;
  if (flags.save) options.disk_cache = true;  // a saved record belongs on disk
  Runtime runtime(options);
  // Without --full, only what an earlier record of this class has not timed is timed.
  TuneRequest request;
  request.reuse_record = !flags.full;
  request.save = flags.save;
  request.time_all = flags.time_all;
  const TuneSummary report = tools.tune(runtime, call, request);
  if (flags.json) std::printf("%s\n", report.log_json.c_str());
  else print_table(report);
  if (flags.save && !flags.json)
    std::printf(report.stored ? "record stored: calls of this class now use the winner\n"
                              : "record kept in memory only: the disk cache did not take it\n");
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto flags = std::make_shared<TuneFlags>();
  auto* command = app.add_subcommand("tune", "Tune one call's class on this GPU and print every candidate");
  add_call_options(*command, flags->call);
  command->add_flag("--json", flags->json, "print the whole tuning log as JSON");
  command->add_flag("--save", flags->save, "store the winner as this class's tuning record");
  command->add_flag("--full", flags->full, "time every candidate, even those a record has timed");
  command->add_flag("--time-all", flags->time_all,
                    "time every candidate in full, slow ones too (no one-sample probe drops them)");
  add_cache_dir_option(*command, flags->cache_dir);
  command->callback([flags] { run_tune(*flags); });
}

}  // namespace kjit::cli
