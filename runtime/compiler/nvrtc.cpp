// SPDX-License-Identifier: Apache-2.0
#include "runtime/compiler/nvrtc.h"

#include <nvrtc.h>

#include <chrono>
#include <memory>

#include "kjit/error.hpp"
#include "runtime/compiler/embedded_sources.h"

namespace kjit {
namespace {

void check_nvrtc(nvrtcResult result, const char* what, const std::string& log = {}) {
  if (result == NVRTC_SUCCESS) return;
  throw Error(Status::kErrorCompile,
              std::string(what) + " failed: " + nvrtcGetErrorString(result), log);
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const noexcept {
    nvrtcDestroyProgram(program);
    delete program;
  }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

Program create_program(const std::string& source) {
  // Every embedded kernel source is offered as a header, so a main source can #include any.
  std::vector<const char*> texts, names;
  std::vector<std::string> storage;
  storage.reserve(2 * (embedded_sources_end() - embedded_sources_begin()));
  for (auto it = embedded_sources_begin(); it != embedded_sources_end(); ++it) {
    storage.emplace_back(it->text);
    texts.push_back(storage.back().c_str());
    storage.emplace_back(it->name);
    names.push_back(storage.back().c_str());
  }
  auto program = Program(new nvrtcProgram(nullptr));
  check_nvrtc(nvrtcCreateProgram(program.get(), source.c_str(), "kjit_kernel.cu",
                                 static_cast<int>(texts.size()), texts.data(), names.data()),
              "nvrtcCreateProgram");
  return program;
}

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

const std::vector<std::string>& fixed_nvrtc_options() {
  // -Xptxas -v: the resource report (registers, spills) comes back in the log, so a compile
  // on a machine without a GPU still says what the kernel costs.
  static const std::vector<std::string> options = {"-std=c++17", "--ptxas-options=-v",
                                                   "-DKJIT_NVRTC=1"};
  return options;
}

CompileResult compile_with_nvrtc(const CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  Program program = create_program(request.source);
  for (const auto& expression : request.name_expressions)
    check_nvrtc(nvrtcAddNameExpression(*program, expression.c_str()), "nvrtcAddNameExpression");

  std::vector<std::string> options = fixed_nvrtc_options();
  options.push_back("--gpu-architecture=sm_" + std::to_string(request.arch));
  options.insert(options.end(), request.options.begin(), request.options.end());
  std::vector<const char*> option_pointers;
  for (const auto& option : options) option_pointers.push_back(option.c_str());

  const nvrtcResult compiled = nvrtcCompileProgram(
      *program, static_cast<int>(option_pointers.size()), option_pointers.data());
  CompileResult result;
  result.log = program_log(*program);
  check_nvrtc(compiled, "NVRTC compilation", result.log);

  for (const auto& expression : request.name_expressions) {
    const char* lowered = nullptr;
    check_nvrtc(nvrtcGetLoweredName(*program, expression.c_str(), &lowered), "nvrtcGetLoweredName");
    result.lowered_names.emplace_back(lowered);
  }
  std::size_t cubin_size = 0;
  check_nvrtc(nvrtcGetCUBINSize(*program, &cubin_size), "nvrtcGetCUBINSize");
  result.cubin.resize(cubin_size);
  check_nvrtc(nvrtcGetCUBIN(*program, result.cubin.data()), "nvrtcGetCUBIN");
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

}  // namespace kjit
