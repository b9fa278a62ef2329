// SPDX-License-Identifier: Apache-2.0
#include "cli_runner.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#ifndef KJIT_CLI_PATH
#error "KJIT_CLI_PATH must name the kjit binary"
#endif

namespace cli_test {

Result run_kjit(const std::string& args, const std::string& env, int seconds) {
  const std::string command = env + " timeout " + std::to_string(seconds) + " " +
                              std::string(KJIT_CLI_PATH) + " " + args + " 2>&1";
  Result result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TempDir::TempDir() {
  char pattern[] = "/tmp/kjit-cli-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  path = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace cli_test
