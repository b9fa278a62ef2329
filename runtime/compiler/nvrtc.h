// SPDX-License-Identifier: Apache-2.0
// NVRTC: one kernel source and its instantiations in, a cubin for one real arch out.
#pragma once

#include <string>
#include <vector>

namespace kjit {

/// What to compile: a main source that may #include any embedded kernel source by file name.
struct CompileRequest {
  std::string source;
  std::vector<std::string> name_expressions;
  int arch = 90;                      ///< compiles to cubin for sm_<arch>
  std::vector<std::string> options;   ///< extra NVRTC options (the fixed ones are always added)
};

/// A cubin and what NVRTC said about it.
struct CompileResult {
  std::vector<char> cubin;
  std::vector<std::string> lowered_names;  ///< one per name expression, same order
  std::string log;                         ///< compiler and ptxas output
  double milliseconds = 0.0;
};

/// Compiles with NVRTC. Throws Error(kErrorCompile) carrying the compiler log on failure.
CompileResult compile_with_nvrtc(const CompileRequest& request);

/// NVRTC's own version, e.g. "13.0".
std::string nvrtc_version();

/// The options every compile uses (part of every kernel key).
const std::vector<std::string>& fixed_nvrtc_options();

/// Real archs this NVRTC can target, e.g. {75, 80, 86, 89, 90, 100, 120}.
std::vector<int> nvrtc_supported_archs();

}  // namespace kjit
