// SPDX-License-Identifier: Apache-2.0
// `kjit cache verify | prune | clear | export | import`: the disk cache's maintenance, one
// DiskCache call each, plus the --cache-dir plumbing every cache-facing command shares.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/disk_cache.h"
#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"

namespace kjit::cli {
namespace {

struct CacheFlags {
  std::string cache_dir;
  std::string max_size;
  std::string file;
  bool json = false;
};

/// The outcome as one JSON object on stdout (--json), or `text` as it is.
void report(const CacheFlags& flags, const nlohmann::ordered_json& fields, const std::string& text) {
  if (flags.json) {
    std::printf("%s\n", fields.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s", text.c_str());
  }
}

std::string size_text(std::uint64_t bytes) {
  if (bytes < (10u << 10)) return std::to_string(bytes) + " B";
  if (bytes < (10u << 20)) return format("%.1f KiB", bytes / 1024.0);
  return format("%.1f MiB", bytes / 1048576.0);
}

/// Exit codes as fsck's: 0 every entry sound, 1 bad entries found and removed, 4 bad entries
/// left (they could not be deleted: a read-only folder, unreadable files).
void report_verify(const CacheFlags& flags, cache::DiskCache& disk,
                   const cache::VerifyReport& found, const std::string& text) {
  std::size_t left = 0;
  if (found.ok != found.checked) {
    // A second pass tells the bad entries still there from the ones just removed.
    const cache::VerifyReport again = disk.verify();
    left = again.checked - again.ok;
  }
  report(flags,
         {{"cache_dir", disk.dir()}, {"checked", found.checked}, {"ok", found.ok},
          {"removed", found.removed}, {"left", left}, {"reasons", found.reasons},
          {"unsafe", found.unsafe}},
         text);
  if (!found.unsafe.empty()) {
    // Folders that are links, or writable by others: kjit neither reads nor deletes in them.
    std::fprintf(stderr,
                 "kjit: error: %zu folders in '%s' are not private to you or not folders; kjit "
                 "leaves them alone (remove them, or 'chmod go-w' them)\n",
                 found.unsafe.size(), disk.dir().c_str());
    throw CLI::RuntimeError(4);
  }
  if (left > 0) {
    std::fprintf(stderr, "kjit: error: %zu bad entries in '%s' could not be removed\n", left,
                 disk.dir().c_str());
    throw CLI::RuntimeError(4);
  }
  if (found.ok != found.checked) throw CLI::RuntimeError(1);
}

void run_verify(const CacheFlags& flags) {
  auto disk = open_disk_cache(flags.cache_dir, false);
  const cache::VerifyReport report = disk->verify();
  std::string text;
  for (const std::string& reason : report.reasons) text += "  " + reason + "\n";
  for (const std::string& folder : report.unsafe) text += "  " + folder + "\n";
  text += format("verified %s: %zu checked, %zu ok, %zu removed%s\n", disk->dir().c_str(),
                 report.checked, report.ok, report.removed,
                 report.ok == report.checked && report.unsafe.empty() ? " (all ok)" : "");
  report_verify(flags, *disk, report, text);
}

void run_prune(const CacheFlags& flags) {
  std::uint64_t limit = disk_cache_settings(flags.cache_dir).cache_max_bytes;
  if (!flags.max_size.empty()) {
    auto parsed = parse_byte_size(flags.max_size);
    if (!parsed)
      throw Error(Status::kErrorInvalidArgument,
                  "--max-size: '" + flags.max_size +
                      "' is not a size such as 500M or 2G (at most 2^64 - 1 bytes; 0: no cap)");
    limit = *parsed;
  }
  auto disk = open_disk_cache(flags.cache_dir, true);
  const cache::PruneReport pruned = disk->prune(limit);
  const std::string cap = limit == 0 ? "no cap (0)" : "at most " + size_text(limit);
  report(flags,
         {{"cache_dir", disk->dir()}, {"max_bytes", limit}, {"removed", pruned.removed},
          {"bytes_before", pruned.bytes_before}, {"bytes_after", pruned.bytes_after}},
         format("pruned %s to %s: removed %zu entries, %s -> %s\n", disk->dir().c_str(),
                cap.c_str(), pruned.removed, size_text(pruned.bytes_before).c_str(),
                size_text(pruned.bytes_after).c_str()));
}

void run_clear(const CacheFlags& flags) {
  auto disk = open_disk_cache(flags.cache_dir, true);
  const std::size_t removed = disk->clear();
  report(flags, {{"cache_dir", disk->dir()}, {"removed", removed}},
         format("cleared %s: removed %zu entries\n", disk->dir().c_str(), removed));
}

void run_export(const CacheFlags& flags) {
  auto disk = open_disk_cache(flags.cache_dir, false);
  const std::size_t count = disk->export_bundle(flags.file);
  report(flags, {{"cache_dir", disk->dir()}, {"bundle", flags.file}, {"exported", count}},
         format("exported %zu entries from %s to %s\n", count, disk->dir().c_str(),
                flags.file.c_str()));
}

void run_import(const CacheFlags& flags) {
  auto disk = open_disk_cache(flags.cache_dir, true);
  const std::size_t count = disk->import_bundle(flags.file);
  report(flags, {{"cache_dir", disk->dir()}, {"bundle", flags.file}, {"imported", count}},
         format("imported %zu entries from %s into %s\n", count, flags.file.c_str(),
                disk->dir().c_str()));
}

}  // namespace

void add_cache_dir_option(CLI::App& command, std::string& dir) {
  command.add_option("--cache-dir", dir,
                     "cache folder (default: KJIT_CACHE_DIR, else ~/.cache/kjit)");
}

EnvSettings disk_cache_settings(const std::string& cache_dir) {
  EnvSettings settings = read_env_settings();
  if (!cache_dir.empty()) settings.cache_dir = cache_dir;
  if (settings.cache_dir.empty())
    throw Error(Status::kErrorInvalidArgument,
                "--cache-dir: no cache folder (KJIT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)");
  settings.disk_cache = true;
  settings.cache_bundle.clear();
  return settings;
}

std::unique_ptr<cache::DiskCache> open_disk_cache(const std::string& cache_dir, bool for_writing) {
  const EnvSettings settings = disk_cache_settings(cache_dir);
  // No size cap here: maintenance commands do exactly what they are asked, nothing more.
  auto disk = std::make_unique<cache::DiskCache>(settings.cache_dir, 0);
  // DiskCache has already logged why; the error only has to stop the command.
  if (!disk->readable())
    throw Error(Status::kErrorCacheIo, "cache folder '" + settings.cache_dir + "' cannot be used");
  if (for_writing && !disk->writable())
    throw Error(Status::kErrorCacheIo, "cache folder '" + settings.cache_dir + "' is read-only");
  return disk;
}

void add_cache_command(CLI::App& app) {
  auto flags = std::make_shared<CacheFlags>();
  auto* command =
      app.add_subcommand("cache", "Check, shrink, empty, export or import the disk cache");
  // At most one verb, checked below when there is none (see main.cpp for why not "exactly one").
  command->require_subcommand(0, 1);
  // Lets --cache-dir come before or after the verb: `kjit cache verify --cache-dir DIR`.
  command->fallthrough();
  add_cache_dir_option(*command, flags->cache_dir);
  command->add_flag("--json", flags->json, "print the outcome as JSON");

  command
      ->add_subcommand("verify", "Check every entry; remove the bad ones (exit 0: all sound, "
                                 "1: bad ones removed, 4: bad ones left)")
      ->callback([flags] {
    run_verify(*flags);
  });
  auto* prune = command->add_subcommand("prune", "Remove least recently used entries over a size");
  prune->add_option("--max-size", flags->max_size,
                    "size to prune to, e.g. 500M; 0 means no cap, as for KJIT_CACHE_MAX_SIZE "
                    "(default: KJIT_CACHE_MAX_SIZE, else 2G); `cache clear` empties the cache");
  prune->callback([flags] { run_prune(*flags); });
  command->add_subcommand("clear", "Remove every entry")->callback([flags] { run_clear(*flags); });
  auto* exporter = command->add_subcommand("export", "Write every entry into one bundle file");
  exporter->add_option("file", flags->file, "bundle file to write")->required();
  exporter->callback([flags] { run_export(*flags); });
  auto* importer = command->add_subcommand("import", "Add every entry of a bundle file");
  importer->add_option("file", flags->file, "bundle file to read")->required();
  importer->callback([flags] { run_import(*flags); });
  command->callback([command] {
    if (command->get_subcommands().empty())
      throw Error(Status::kErrorInvalidArgument,
                  "cache: name what to do: " + command_names(*command));
  });
}

}  // namespace kjit::cli
