// SPDX-License-Identifier: Apache-2.0
// What scripts read from the `kjit` binary: --version, JSON from info, compile (softmax_topk
// through the op registry too), precompile and the cache commands, and cache verify's exit code
// (as fsck's: 0 all sound, 1 bad entries found and removed).
#include <doctest/doctest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kjit/kjit.h"

#ifndef KJIT_CLI_PATH
#error "KJIT_CLI_PATH must name the kjit binary"
#endif

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;  // stdout only: the JSON
};

Result kjit(const std::string& args) {
  const std::string command = std::string(KJIT_CLI_PATH) + " " + args + " 2>/dev/null";
  Result result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

nlohmann::json json_of(const Result& result) {
  INFO(result.out);
  REQUIRE(result.code == 0);
  return nlohmann::json::parse(result.out);
}

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/kjit-cli-json-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string path;
};

}  // namespace

TEST_CASE("--version prints the library's version") {
  const Result version = kjit("--version");
  CHECK(version.code == 0);
  CHECK(version.out.find(std::string("kjit ") + KJIT_VERSION_STRING) == 0);
}

TEST_CASE("info --json") {
  const nlohmann::json info = json_of(kjit("info --json"));
  CHECK(info["kjit"] == KJIT_VERSION_STRING);
  CHECK(!info["archs"].empty());
  CHECK(info["gpus"].is_array());
  CHECK((info["driver"].is_string() || info.contains("no_driver")));
}

TEST_CASE("compile --op softmax_topk --k goes through the op registry") {
  const nlohmann::json report = json_of(
      kjit("compile --op softmax_topk --k 50 --cols 32000 --rows 8 --index-dtype i32 --arch sm_90 --json"));
  CHECK(report["kernel"].get<std::string>().find("kjit::topk_") == 0);
  CHECK(report["planned"]["k"].get<int>() >= 50);
  CHECK(report["planned"]["index_dtype"] == "i32");
  CHECK(report["registers"].get<int>() > 0);
  CHECK(kjit("compile --op softmax_topk --k 50000 --cols 32000 --arch sm_90").code == 2);
}

TEST_CASE("compile --op attention takes its fields through --field, for sm_80 and sm_90") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    const nlohmann::json report = json_of(kjit(
        std::string("compile --op attention --dtype bf16 --field m=49 --field n=49 --field d=32 --field batch=4096 "
                    "--field heads=4 --field bias_dtype=f32 --field mask_dtype=f16 --field mask_windows=64 --arch ") +
        arch + " --json"));
    CHECK(report["kernel"].get<std::string>().find("kjit::attention_tile<kjit::bf16, 49, 49, 32, 32, 1, 2, false") == 0);
    CHECK(report["planned"]["heads"] == 4);
    CHECK(report["spill_bytes"] == 0);
  }
  const Result causal = kjit("compile --op attention --field m=197 --field n=197 --field d=64 --field causal=true "
                             "--algorithm tile --arch sm_90");
  CHECK(causal.code == 0);
  CHECK(causal.out.find("197, 197, 64, 64, 0, 0, true") != std::string::npos);
  CHECK(kjit("compile --op attention --field m=49 --field n=49 --field d=48 --arch sm_90").code == 2);
  CHECK(kjit("compile --op attention --field m=49 --field n=49 --field d=32 --cols 7 --arch sm_90").code == 2);
}

TEST_CASE("precompile --json, then the cache commands' JSON and verify's exit codes") {
  TempDir dir;
  const std::string cache = dir.path + "/cache", spec = dir.path + "/spec.json";
  std::ofstream(spec) << R"({"ops": ["softmax"], "dtypes": ["f32"], "cols": [128, 256], "rows": [4]})";
  const nlohmann::json filled =
      json_of(kjit("precompile --arch sm_90 --spec " + spec + " --cache-dir " + cache + " --json"));
  CHECK(filled["kernels"] == 2);
  CHECK(filled["compiled"] == 2);
  CHECK(filled["failed"] == 0);

  const nlohmann::json sound = json_of(kjit("cache verify --json --cache-dir " + cache));
  CHECK(sound["checked"] == 2);
  CHECK(sound["ok"] == 2);
  CHECK(sound["removed"] == 0);

  fs::path victim;
  for (const auto& entry : fs::recursive_directory_iterator(cache))
    if (entry.is_regular_file() && entry.path().extension() == ".bin") victim = entry.path();
  REQUIRE(!victim.empty());
  std::fstream file(victim, std::ios::in | std::ios::out | std::ios::binary);
  const auto middle = static_cast<std::streamoff>(fs::file_size(victim) / 2);
  file.seekg(middle);
  const char byte = static_cast<char>(file.get());
  file.seekp(middle);
  file.put(static_cast<char>(byte ^ 0xFF));
  file.close();
  const Result repaired = kjit("cache verify --json --cache-dir " + cache);
  CHECK(repaired.code == 1);
  const nlohmann::json found = nlohmann::json::parse(repaired.out);
  CHECK(found["ok"] == 1);
  CHECK(found["removed"] == 1);
  CHECK(found["left"] == 0);
  CHECK(kjit("cache verify --cache-dir " + cache).code == 0);

  const std::string bundle = dir.path + "/kernels.kjb";
  CHECK(json_of(kjit("cache export " + bundle + " --json --cache-dir " + cache))["exported"] == 1);
  CHECK(json_of(kjit("cache clear --json --cache-dir " + cache))["removed"] == 1);
  CHECK(json_of(kjit("cache import " + bundle + " --json --cache-dir " + cache))["imported"] == 1);
  CHECK(json_of(kjit("cache prune --max-size 1 --json --cache-dir " + cache))["removed"] == 1);
}
