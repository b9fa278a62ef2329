// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the CLI commands: problems from flags, arch names, plain tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kjit/types.hpp"
#include "runtime/driver/context.h"

namespace kjit::cli {

/// "sm_90" or "90" -> 90, for an arch kjit can compile for (require_target_arch); throws
/// Error(kErrorInvalidArgument) naming `flag` otherwise.
int parse_arch(const std::string& text, const char* flag);

/// The device behind the current context, or nominal properties of `arch` when `arch` is given
/// or there is no GPU. `arch` 0 means "the GPU's own"; without a GPU that is an error.
DeviceProps target_device(int arch, bool* on_gpu);

/// "info, compile, demo, ...": the subcommands of `command`, for errors that ask for one.
std::string command_names(const CLI::App& command);

/// True when a driver and at least one GPU are here (never throws).
bool gpu_present();

/// A left-aligned text table printed column by column.
class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void add(std::vector<std::string> row);
  void print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

/// `text` with every control character written as \xNN, safe to print to a terminal.
std::string printable(const std::string& text);

/// printf-style formatting to std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kjit::cli
