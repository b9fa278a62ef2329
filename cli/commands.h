// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <CLI/CLI.hpp>

namespace kjit::cli {

/// Each adds one subcommand to the app; the subcommand's callback does the work.
void add_info_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_demo_command(CLI::App& app);

}  // namespace kjit::cli
