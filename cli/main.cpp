// SPDX-License-Identifier: Apache-2.0
// kjit: inspect the toolkit and GPUs, compile kernels for any arch, run the demo, fill and
// look after the kernel cache.
#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "kjit/kjit.h"

int main(int argc, char** argv) {
  CLI::App app{"kjit: JIT-compiled softmax-family GPU kernels"};
  app.set_version_flag("--version", std::string("kjit ") + kjit_version());
  // At most one: with "exactly one", CLI11 answers `kjit frob` with "A subcommand is required"
  // instead of naming frob. A missing command is caught after parsing.
  app.require_subcommand(0, 1);
  kjit::cli::add_info_command(app);
  kjit::cli::add_compile_command(app);
  kjit::cli::add_demo_command(app);
  kjit::cli::add_tune_command(app);
  kjit::cli::add_bench_command(app);
  kjit::cli::add_precompile_command(app);
  kjit::cli::add_inspect_command(app);
  kjit::cli::add_cache_command(app);
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty())
      throw kjit::Error(kjit::Status::kErrorInvalidArgument,
                        "a command is required: " + kjit::cli::command_names(app) +
                            " (kjit --help tells more)");
  } catch (const CLI::Error& e) {
    // Parse errors, --help, --version, and a command's own exit code (CLI::RuntimeError).
    return app.exit(e);
  } catch (const kjit::Error& e) {
    std::fprintf(stderr, "kjit: error: %s\n", e.what());
    return e.status() == kjit::Status::kErrorInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    // Anything else (file system, allocation) still ends with a message, not an abort.
    std::fprintf(stderr, "kjit: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
