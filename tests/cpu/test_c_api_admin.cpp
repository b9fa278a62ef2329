// SPDX-License-Identifier: Apache-2.0
// The C API for bindings: the version, a runtime made from an options struct that carries its
// own size, warm-up and explain from a call's description, and the log callback.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/kjit.h"
#include "runtime/log.h"
#include "support/device_buffer.h"

namespace {

std::string last_error() { return kjit_last_error(); }

kjit_options defaults() {
  kjit_options options{};
  REQUIRE(kjit_options_from_environment(&options) == KJIT_SUCCESS);
  options.cache_dir = "";  // memory only: these tests leave no files
  return options;
}

kjit_status create(const kjit_options& options) {
  kjit_runtime* rt = nullptr;
  const kjit_status status = kjit_runtime_create_with_options(&rt, &options);
  kjit_runtime_destroy(rt);
  return status;
}

}  // namespace

TEST_CASE("kjit_version is the headers' version") {
  const std::string version = kjit_version();
  CHECK(version == KJIT_VERSION_STRING);
  CHECK(version == std::to_string(KJIT_VERSION_MAJOR) + "." + std::to_string(KJIT_VERSION_MINOR) +
                       "." + std::to_string(KJIT_VERSION_PATCH));
}

TEST_CASE("options come from the environment, with their size") {
  ::setenv("KJIT_TUNE", "first-use", 1);
  ::setenv("KJIT_CACHE_MAX_SIZE", "300M", 1);
  kjit_options options{};
  REQUIRE(kjit_options_from_environment(&options) == KJIT_SUCCESS);
  ::unsetenv("KJIT_TUNE");
  ::unsetenv("KJIT_CACHE_MAX_SIZE");
  CHECK(options.size == sizeof(kjit_options));
  CHECK(options.tune == KJIT_TUNE_FIRST_USE);
  CHECK(options.cache_max_bytes == (300ull << 20));
  CHECK(options.jit == 1);
  CHECK(kjit_options_from_environment(nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("a runtime from an options struct") {
  kjit_options options = defaults();
  CHECK(create(options) == KJIT_SUCCESS);

  // A caller built against an older, shorter kjit_options: the fields past its size keep their
  // defaults, so garbage there is never read.
  kjit_options older = defaults();
  older.size = offsetof(kjit_options, cache_max_bytes);
  older.cache_max_bytes = 12345;
  older.dependent_launch = 77;
  CHECK(create(older) == KJIT_SUCCESS);

  kjit_options bad = defaults();
  bad.size = 4;
  CHECK(create(bad) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("options->size") == 0);
  bad.size = sizeof(kjit_options) + 8;  // a header newer than this library
  CHECK(create(bad) == KJIT_ERROR_INVALID_ARGUMENT);
  bad = defaults();
  bad.tune = static_cast<kjit_tune_mode>(7);
  CHECK(create(bad) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("options->tune") == 0);
  bad = defaults();
  bad.log_level = "loud";
  CHECK(create(bad) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("log_level") == 0);
  CHECK(kjit_runtime_create_with_options(nullptr, &options) == KJIT_ERROR_INVALID_ARGUMENT);
  kjit_runtime* rt = nullptr;
  CHECK(kjit_runtime_create_with_options(&rt, nullptr) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(rt == nullptr);
}

TEST_CASE("a runtime given a log level sets the logger's") {
  kjit_options options = defaults();
  options.log_level = "debug";
  REQUIRE(create(options) == KJIT_SUCCESS);
  CHECK(kjit::log().level() == spdlog::level::debug);
  options.log_level = "warn";
  REQUIRE(create(options) == KJIT_SUCCESS);
  CHECK(kjit::log().level() == spdlog::level::warn);
}

TEST_CASE("prepare and explain name what is wrong with the call") {
  kjit_runtime* rt = nullptr;
  kjit_options options = defaults();
  REQUIRE(kjit_runtime_create_with_options(&rt, &options) == KJIT_SUCCESS);
  CHECK(kjit_prepare(rt, "not json") == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("call") == 0);
  CHECK(kjit_prepare(rt, R"({"op": "softmax_v2", "cols": 10})") == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("op") == 0);
  CHECK(kjit_prepare(rt, R"({"op": "softmax_topk", "cols": 10, "k": 11})") ==
        KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(last_error().find("k") == 0);
  CHECK(kjit_prepare(nullptr, R"({"op": "softmax", "cols": 10})") == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK(kjit_explain(rt, R"({"op": "softmax", "cols": 10})", nullptr, 8, nullptr) ==
        KJIT_ERROR_INVALID_ARGUMENT);
  kjit_runtime_destroy(rt);
}

TEST_CASE("prepare names a field the op does not read, and why a call does not parse") {
  kjit_runtime* rt = nullptr;
  kjit_options options = defaults();
  REQUIRE(kjit_runtime_create_with_options(&rt, &options) == KJIT_SUCCESS);
  // Misspelt or meant for another op: ignoring it would prepare some other kernel than intended.
  CHECK(kjit_prepare(rt, R"({"op": "softmax", "cols": 10, "colls": 20})") ==
        KJIT_ERROR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().find(R"(field "colls" is not read by softmax)") == 0, last_error());
  CHECK(kjit_prepare(rt, R"({"op": "softmax", "cols": 10, "k": 4})") == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().find(R"(field "k")") == 0, last_error());
  // An object with a number past double's range is not "not an object": the reason is given.
  CHECK(kjit_prepare(rt, R"({"op": "softmax", "cols": 1e400})") == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().find("number overflow") != std::string::npos, last_error());
  // A call megabytes long is not echoed whole.
  const std::string deep = std::string(1 << 20, '[') + std::string(1 << 20, ']');
  CHECK(kjit_prepare(rt, deep.c_str()) == KJIT_ERROR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().size() < 1000, last_error().substr(0, 200));
  kjit_runtime_destroy(rt);
}

TEST_CASE("explain reports the kernel, or that there is no driver") {
  kjit_runtime* rt = nullptr;
  kjit_options options = defaults();
  REQUIRE(kjit_runtime_create_with_options(&rt, &options) == KJIT_SUCCESS);
  const char* call = R"({"op": "softmax", "dtype": "bf16", "rows": 64, "cols": 4096})";
  std::string why;
  if (!kjit::test::gpu_available(&why)) {
    CHECK(kjit_prepare(rt, call) == (why.find("no CUDA driver") != std::string::npos
                                         ? KJIT_ERROR_NO_DRIVER
                                         : KJIT_ERROR_DRIVER));
    kjit::test::report_gpu_skip(why);
    kjit_runtime_destroy(rt);
    return;
  }
  REQUIRE(kjit_prepare(rt, call) == KJIT_SUCCESS);
  std::size_t length = 0;
  REQUIRE(kjit_explain(rt, call, nullptr, 0, &length) == KJIT_SUCCESS);
  std::vector<char> text(length + 1);
  REQUIRE(kjit_explain(rt, call, text.data(), text.size(), &length) == KJIT_SUCCESS);
  const nlohmann::json report = nlohmann::json::parse(text.data());
  CHECK(report["kernel"].get<std::string>().find("kjit::") == 0);
  CHECK(report["registers"].get<int>() > 0);
  char small[16];
  REQUIRE(kjit_explain(rt, call, small, sizeof(small), nullptr) == KJIT_SUCCESS);
  CHECK(std::string(small) == std::string(text.data()).substr(0, sizeof(small) - 1));
  kjit_runtime_destroy(rt);
}

namespace {

std::vector<std::pair<kjit_log_level, std::string>> received;

void collect(kjit_log_level level, const char* message, void* user_data) {
  *static_cast<int*>(user_data) += 1;
  received.emplace_back(level, message);
}

}  // namespace

TEST_CASE("the log callback receives kjit's lines until it is removed") {
  int calls = 0;
  kjit_set_log_callback(collect, &calls);
  kjit::log().warn("a line for the callback: {}", 42);
  kjit::log().debug("below the level: not made");
  kjit_set_log_callback(nullptr, nullptr);
  kjit::log().warn("a line for stderr");
  REQUIRE(received.size() == 1);
  CHECK(calls == 1);
  CHECK(received[0].first == KJIT_LOG_WARN);
  CHECK(received[0].second == "a line for the callback: 42");
}
