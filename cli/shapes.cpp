// SPDX-License-Identifier: Apache-2.0
#include "cli/shapes.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "kjit/error.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

namespace kjit::cli {

int parse_arch(const std::string& text, const char* flag) {
  std::string digits = text.rfind("sm_", 0) == 0 ? text.substr(3) : text;
  const bool numeric = !digits.empty() && digits.size() <= 3 &&
                       std::all_of(digits.begin(), digits.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!numeric)
    throw Error(Status::kErrorInvalidArgument,
                std::string(flag) + ": '" + text + "' is not an arch such as sm_90");
  const int arch = std::stoi(digits);
  try {
    require_target_arch(arch);
  } catch (const Error& e) {
    throw Error(Status::kErrorInvalidArgument, std::string(flag) + ": " + e.what());
  }
  return arch;
}

DeviceProps target_device(int arch, bool* on_gpu) {
  *on_gpu = false;
  if (driver_available()) {
    int count = 0;
    if (cuda().cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0) {
      current_or_primary_context();
      CUdevice device = 0;
      KJIT_CU(cuCtxGetDevice, &device);
      DeviceProps props = query_device(device);
      if (arch == 0 || arch == props.arch) {
        *on_gpu = true;
        return props;
      }
    }
  }
  if (arch == 0)
    throw Error(Status::kErrorInvalidArgument, "--arch: no GPU here; name a target such as sm_90");
  return nominal_device(arch);
}

std::string command_names(const CLI::App& command) {
  std::string names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

bool gpu_present() {
  int count = 0;
  return driver_available() && cuda().cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

Table::Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

void Table::add(std::vector<std::string> row) {
  // Cells may come from cache metadata anyone could forge: no control character reaches the
  // terminal as itself.
  for (std::string& cell : row) cell = printable(cell);
  rows_.push_back(std::move(row));
}

std::string printable(const std::string& text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) shown += format("\\x%02x", byte);
    else shown += c;
  }
  return shown;
}

void Table::print() const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return buffer;
}

}  // namespace kjit::cli
