// SPDX-License-Identifier: Apache-2.0
#include "runtime/compiler/resource_usage.h"

#include <cctype>
#include <sstream>

namespace kjit {
namespace {

/// The integer written just before `unit` in `line` ("... 40 registers" -> 40), else 0.
/// Plain string scanning: std::regex is slow to build and has crashed when libkjit shares a
/// process with other C++ runtimes' locale set-up.
int number_before(const std::string& line, const std::string& unit) {
  std::size_t at = line.find(unit);
  if (at == std::string::npos) return 0;
  while (at > 0 && line[at - 1] == ' ') --at;
  std::size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin == at ? 0 : std::stoi(line.substr(begin, at - begin));
}

}  // namespace

ResourceUsage parse_resource_usage(const std::string& log, const std::string& lowered_name) {
  // ptxas prints, per kernel: "Compiling entry function '<name>' for 'sm_90'", then
  // "N bytes stack frame, N bytes spill stores, N bytes spill loads" and
  // "Used N registers, ... N bytes smem, ...".
  ResourceUsage usage;
  std::istringstream lines(log);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      inside = line.find("'" + lowered_name + "'") != std::string::npos;
      continue;
    }
    if (!inside) continue;
    if (line.find("stack frame") != std::string::npos) {
      usage.stack_frame = number_before(line, "bytes stack frame");
      usage.spill_stores = number_before(line, "bytes spill stores");
      usage.spill_loads = number_before(line, "bytes spill loads");
    } else if (line.find("Used") != std::string::npos && line.find("registers") != std::string::npos) {
      usage.registers = number_before(line, "registers");
      usage.static_smem = number_before(line, "bytes smem");
      usage.found = true;
      inside = false;
    }
  }
  return usage;
}

}  // namespace kjit
