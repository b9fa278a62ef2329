// SPDX-License-Identifier: Apache-2.0
// Runs the `kjit` binary as a user would (through the shell) for the CLI suites, with fresh
// temp folders and small text helpers.
#pragma once

#include <string>

namespace cli_test {

/// Exit code (-1 when killed by a signal) and stdout and stderr together.
struct Result {
  int code = -1;
  std::string output;
};

/// Runs `[env] kjit <args>` through the shell, stopped after `seconds` (exit code 124), so a
/// hang fails its test instead of the suite's time limit.
Result run_kjit(const std::string& args, const std::string& env = "", int seconds = 300);

/// A fresh folder for one test, removed with everything in it at the end.
struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

/// Writes `text` to `dir`/`name` and returns the path.
std::string write_file(const TempDir& dir, const std::string& name, const std::string& text);

/// True when `part` occurs in `text`.
bool contains(const std::string& text, const std::string& part);

}  // namespace cli_test
