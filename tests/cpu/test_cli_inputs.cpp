// SPDX-License-Identifier: Apache-2.0
// The `kjit` binary handed what a careless or hostile user may hand it: deep or endless spec
// files, folders and FIFOs where files belong, forged cache entries, sizes that overflow, archs
// NVRTC cannot target, unknown commands. Each ends in a named error or a correct result, never
// a crash, a hang or a deleted file that was not the cache's own.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "tests/cache/test_support.h"

namespace {

namespace fs = std::filesystem;
using namespace cli_test;
using kjit::cache::testing::forged_entry;
using kjit::cache::testing::read_bytes;

/// One kernel: quick to compile, and its entry is the only file in the cache.
constexpr const char* kOneKernel =
    R"({"ops": ["softmax"], "dtypes": ["f32"], "cols": [128], "rows": [1]})";

Result precompile(const std::string& cache, const std::string& spec) {
  return run_kjit("precompile --arch sm_90 --spec " + spec + " --cache-dir " + cache);
}

/// The cache's only entry file, after a precompile of kOneKernel.
std::string only_entry(const std::string& cache) {
  std::vector<std::string> found;
  for (const auto& item : fs::recursive_directory_iterator(cache))
    if (item.path().extension() == ".bin") found.push_back(item.path().string());
  REQUIRE(found.size() == 1);
  return found[0];
}

bool gpu_here() { return contains(run_kjit("info").output, "gpu 0"); }

}  // namespace

TEST_CASE("row 1: a spec nested 100,000 levels deep is named, in precompile and in bench") {
  TempDir dir;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& text : {R"({"ops": )" + deep + "}", deep}) {
    const std::string spec = write_file(dir, "deep.json", text);
    for (const std::string& command : {"precompile --arch sm_90 --cache-dir " + dir / "c" + " --spec ",
                                       std::string("bench --spec ")}) {
      CAPTURE(command);
      const Result result = run_kjit(command + spec);
      CHECK(result.code == 2);
      CHECK(contains(result.output, "not valid JSON: nested deeper than 32 levels"));
    }
  }
}

TEST_CASE("row 2: a FIFO at an entry's path is replaced by precompile, which does not block") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kOneKernel);
  REQUIRE(precompile(cache, spec).code == 0);
  const std::string entry = only_entry(cache);
  REQUIRE(::unlink(entry.c_str()) == 0);
  REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
  const Result again = run_kjit("precompile --arch sm_90 --spec " + spec + " --cache-dir " + cache, "", 60);
  CHECK(again.code == 0);
  CHECK(contains(again.output, "1 compiled"));
  const Result verified = run_kjit("cache verify --cache-dir " + cache, "", 60);
  CHECK(verified.code == 0);
  CHECK(contains(verified.output, "1 checked, 1 ok"));
  REQUIRE(::unlink(entry.c_str()) == 0);
  REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
  const Result found = run_kjit("cache verify --cache-dir " + cache, "", 60);
  CHECK(contains(found.output, "is a FIFO, not a regular file"));
  CHECK(contains(found.output, "1 removed"));
}

TEST_CASE("row 3: cache import and KJIT_CACHE_BUNDLE naming a FIFO are refused at once") {
  TempDir dir;
  const std::string fifo = dir / "bundle.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Result imported = run_kjit("cache import " + fifo + " --cache-dir " + dir / "cache", "", 60);
  CHECK(imported.code == 1);
  CHECK(contains(imported.output, "is a FIFO, not a regular file"));
  const Result explained =
      run_kjit("inspect --explain --op softmax --cols 128 --arch sm_90 --cache-dir " + dir / "cache",
           "KJIT_CACHE_BUNDLE=" + fifo, 60);
  CHECK(explained.code == 0);
  CHECK(contains(explained.output, "ignoring cache bundle"));
}

TEST_CASE("row 4: --spec /dev/zero is refused before reading, a FIFO without a writer reads empty") {
  const Result zero = run_kjit("precompile --arch sm_90 --spec /dev/zero --cache-dir /tmp/unused", "", 60);
  CHECK(zero.code == 2);
  CHECK(contains(zero.output, "cannot read '/dev/zero': it is not a regular file or a pipe"));
  TempDir dir;
  const std::string fifo = dir / "spec.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Result empty = run_kjit("bench --spec " + fifo, "", 60);
  CHECK(empty.code == 2);
  CHECK(contains(empty.output, "not valid JSON"));
  // An endless pipe stops at the cap.
  const Result endless = run_kjit("bench --spec /dev/stdin", "yes '[' |", 60);
  CHECK(endless.code == 2);
  CHECK(contains(endless.output, "too long for a spec"));
}

TEST_CASE("a spec whose lists multiply past 100,000 calls is refused before expanding") {
  TempDir dir;
  std::string values;
  for (int i = 1; i <= 1000; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  const std::string spec = write_file(
      dir, "long.json", R"({"ops": ["softmax"], "cols": [)" + values + R"(], "rows": [)" + values + "]}");
  const Result result = run_kjit("bench --spec " + spec, "", 60);
  CHECK(result.code == 2);
  CHECK(contains(result.output, "expands to more than 100000 calls"));
}

TEST_CASE("row 5: cache export refuses to replace a link, a FIFO or a folder") {
  TempDir dir;
  const std::string cache = " --cache-dir " + dir / "cache";
  const std::string target = write_file(dir, "target.txt", "the link's target");
  const std::string link = dir / "out.kjb";
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  const Result exported = run_kjit("cache export " + link + cache);
  CHECK(exported.code == 1);
  CHECK(contains(exported.output, "is a symbolic link; kjit replaces only a regular file of yours"));
  struct stat st {};
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(read_bytes(target) == "the link's target");
  CHECK(run_kjit("cache export " + dir / "new.kjb" + cache).code == 0);
}

TEST_CASE("row 6: prune sizes overflow into an error, and 0 means no cap everywhere") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kOneKernel);
  REQUIRE(precompile(cache, spec).code == 0);
  const Result huge = run_kjit("cache prune --max-size 17179869184G --cache-dir " + cache);
  CHECK(huge.code == 2);
  CHECK(contains(huge.output, "--max-size: '17179869184G' is not a size"));
  const Result zero = run_kjit("cache prune --max-size 0 --cache-dir " + cache);
  CHECK(zero.code == 0);
  CHECK(contains(zero.output, "no cap (0): removed 0 entries"));
  const Result from_env = run_kjit("cache prune --cache-dir " + cache, "KJIT_CACHE_MAX_SIZE=0");
  CHECK(contains(from_env.output, "removed 0 entries"));
  const Result bad_env = run_kjit("cache prune --cache-dir " + cache, "KJIT_CACHE_MAX_SIZE=17179869184G");
  CHECK(bad_env.code == 2);
  CHECK(contains(bad_env.output, "KJIT_CACHE_MAX_SIZE='17179869184G'"));
  CHECK(contains(run_kjit("cache verify --cache-dir " + cache).output, "1 checked, 1 ok"));
}

TEST_CASE("row 7: verify and clear never follow a shard that is a link") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kOneKernel);
  REQUIRE(precompile(cache, spec).code == 0);
  const std::string entry = only_entry(cache);
  const std::string shard = entry.substr(0, entry.rfind('/'));
  const std::string victim = dir / "victim";
  fs::create_directory(victim);
  const std::string victim_file = write_file(dir, "victim/" + entry.substr(entry.rfind('/') + 1), "x");
  fs::remove_all(shard);
  REQUIRE(::symlink(victim.c_str(), shard.c_str()) == 0);
  const Result verified = run_kjit("cache verify --cache-dir " + cache);
  CHECK(verified.code == 4);  // left alone, so not all sound (4: bad things remain)
  CHECK(contains(verified.output, "is a symbolic link, not a folder"));
  CHECK(run_kjit("cache clear --cache-dir " + cache).code == 0);
  CHECK(read_bytes(victim_file) == "x");
}

TEST_CASE("row 8: a folder at an entry's path: precompile stores every kernel and counts right") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kOneKernel);
  REQUIRE(precompile(cache, spec).code == 0);
  const std::string entry = only_entry(cache);
  REQUIRE(::unlink(entry.c_str()) == 0);
  fs::create_directories(entry + "/inside");
  const Result again = precompile(cache, spec);
  CHECK(again.code == 0);
  CHECK(contains(again.output, "1 compiled"));
  CHECK(fs::is_regular_file(entry));
  REQUIRE(::unlink(entry.c_str()) == 0);
  fs::create_directories(entry + "/inside");
  const Result verified = run_kjit("cache verify --cache-dir " + cache);
  CHECK(contains(verified.output, "is a directory, not a regular file"));
  CHECK_FALSE(fs::exists(entry));
}

TEST_CASE("row 9: a forged entry with odd metadata is a miss for precompile, skipped by inspect") {
  TempDir dir;
  const std::string cache = dir / "cache", spec = write_file(dir, "spec.json", kOneKernel);
  REQUIRE(precompile(cache, spec).code == 0);
  const std::string entry = only_entry(cache);
  const std::string listed = run_kjit("inspect --json --cache-dir " + cache).output;
  REQUIRE(contains(listed, "\"kind\": \"cubin\""));
  // The key text of the real entry, kept, so that only the metadata is odd.
  const std::string bytes = read_bytes(entry);
  // Magic, version, then the kind "cubin" and the key text, each after a little-endian u32.
  const std::size_t at = 8 + 4 + 4 + 5;
  std::size_t key_length = 0;
  for (int i = 3; i >= 0; --i) key_length = key_length << 8 | static_cast<unsigned char>(bytes[at + i]);
  const std::string key = bytes.substr(at + 4, key_length);
  kjit::cache::testing::write_bytes(
      entry, forged_entry("cubin", key, R"({"lowered_name": 7})", "cubin"));
  const Result inspected = run_kjit("inspect --cache-dir " + cache);
  CHECK(inspected.code == 0);
  CHECK(contains(inspected.output, "no entries"));
  const Result again = precompile(cache, spec);
  CHECK(again.code == 0);
  CHECK(contains(again.output, "1 compiled"));
  kjit::cache::testing::write_bytes(
      entry, forged_entry("cubin", key, R"({"lowered_name": 7})", "cubin"));
  const Result verified = run_kjit("cache verify --cache-dir " + cache);
  CHECK(contains(verified.output, "metadata: \"lowered_name\" is 7, not a string"));
  CHECK(contains(verified.output, "1 removed"));
}

TEST_CASE("row 12: an arch NVRTC or kjit cannot target is refused by every command") {
  TempDir dir;
  const std::string cache = " --cache-dir " + dir / "cache";
  const Result demo = run_kjit("demo --arch sm_0");
  CHECK(demo.code == 2);
  CHECK(contains(demo.output, "--arch: arch sm_0 is not supported: kjit's kernels need sm_80"));
  const Result compile = run_kjit("compile --op softmax --cols 128 --arch sm_999");
  CHECK(compile.code == 2);
  CHECK(contains(compile.output, "--arch: arch sm_999 is not supported: this NVRTC"));
  const Result explain = run_kjit("inspect --explain --op softmax --cols 128 --arch sm_70" + cache);
  CHECK(explain.code == 2);
  CHECK(contains(explain.output, "--arch: arch sm_70 is not supported"));
  const Result list = run_kjit("precompile --arch sm_90,sm_75 --spec " + write_file(dir, "s.json", kOneKernel) + cache);
  CHECK(list.code == 2);
  CHECK(contains(list.output, "arch sm_75 is not supported"));
}

TEST_CASE("row 13: tune names a bad call first, then the missing GPU, never a missing --arch") {
  const Result bad_cols = run_kjit("tune --op softmax_topk --k 5 --cols 0 --dtype f32");
  CHECK(bad_cols.code == 2);
  CHECK(contains(bad_cols.output, "cols must be >= 1"));
  const Result bad_dtype = run_kjit("tune --op softmax_topk --k 5 --cols 100 --dtype i32");
  CHECK(bad_dtype.code == 2);
  CHECK(contains(bad_dtype.output, "in_dtype"));
  if (gpu_here()) {
    MESSAGE("a GPU is here: the no-GPU case of tune is not tried");
    return;
  }
  const Result tune = run_kjit("tune --op softmax --cols 128");
  CHECK(tune.code == 1);
  CHECK(contains(tune.output, "kjit tune times kernels on a GPU and there is none here"));
  CHECK_FALSE(contains(tune.output, "--arch"));
  // --time-all is a flag of tune: the call gets as far as the missing GPU.
  const Result time_all = run_kjit("tune --op softmax --cols 128 --full --time-all");
  CHECK(time_all.code == 1);
  CHECK(contains(time_all.output, "there is none here"));
}

TEST_CASE("an integer flag past the 64-bit range is refused as given, not read as the nearest limit") {
  for (const std::string flag : {"--cols", "--rows", "--k"}) {
    CAPTURE(flag);
    const Result huge = run_kjit("compile --op softmax_topk --cols 128 --k 4 --arch sm_90 " + flag +
                                 " 99999999999999999999999");
    CHECK(huge.code != 0);  // CLI11's own code for a refused value, as for any malformed flag
    CHECK(contains(huge.output, flag + ": '99999999999999999999999' is past the 64-bit integer range"));
    CHECK_FALSE(contains(huge.output, "9223372036854775807"));
  }
  const Result negative = run_kjit("compile --op softmax --cols -99999999999999999999 --arch sm_90");
  CHECK(negative.code != 0);
  CHECK(contains(negative.output, "--cols: '-99999999999999999999' is past the 64-bit integer range"));
}

TEST_CASE("row 14: row counts above 2^40 are named in calls and in specs") {
  const Result compile = run_kjit("compile --op softmax --cols 128 --rows 4611686018427387904 --arch sm_90");
  CHECK(compile.code == 2);
  CHECK(contains(compile.output, "rows: must be in 1..2^40"));
  const Result topk =
      run_kjit("inspect --explain --op softmax_topk --k 4 --cols 128 --rows 4611686018427387904 --arch sm_90");
  CHECK(topk.code == 2);
  CHECK(contains(topk.output, "rows: must be in 1..2^40"));
  TempDir dir;
  const std::string spec = write_file(
      dir, "rows.json", R"({"ops": ["softmax"], "cols": [128], "rows": [9223372036854775807]})");
  const Result precompiled = precompile(dir / "cache", spec);
  CHECK(precompiled.code == 2);
  CHECK(contains(precompiled.output, "rows: must be in 1..2^40"));
}

TEST_CASE("row 16: a spec that is a folder or unreadable, and an unknown command, are named") {
  TempDir dir;
  const Result folder = run_kjit("bench --spec " + dir.path);
  CHECK(folder.code == 2);
  CHECK(contains(folder.output, "cannot read '" + dir.path + "': it is a directory"));
  const Result missing = run_kjit("bench --spec " + dir / "missing.json");
  CHECK(missing.code == 2);
  CHECK(contains(missing.output, "No such file or directory"));
  if (::geteuid() != 0) {
    const std::string locked = write_file(dir, "locked.json", kOneKernel);
    REQUIRE(::chmod(locked.c_str(), 0) == 0);
    const Result denied = run_kjit("bench --spec " + locked);
    CHECK(denied.code == 2);
    CHECK(contains(denied.output, "Permission denied"));
  } else {
    MESSAGE("running as root, which reads any file: the permission case is skipped (the read "
            "error below still shows the reason is named)");
  }
  // Opens fine, then every read fails: the error names errno's reason.
  const Result unreadable = run_kjit("bench --spec /proc/self/mem");
  CHECK(unreadable.code == 2);
  CHECK(contains(unreadable.output, "cannot read '/proc/self/mem': Input/output error"));
  const Result unknown = run_kjit("frob");
  CHECK(unknown.code != 0);
  CHECK(contains(unknown.output, "frob"));
  const Result none = run_kjit("");
  CHECK(none.code == 2);
  CHECK(contains(none.output, "a command is required: info, compile"));
  const Result verbless = run_kjit("cache");
  CHECK(verbless.code == 2);
  CHECK(contains(verbless.output, "verify, prune, clear, export, import"));
}

TEST_CASE("a call field the op does not read is named, not ignored") {
  // A spec file refused these; --field and the call flags dropped them in silence.
  const Result misspelt = run_kjit("compile --op softmax --cols 128 --arch sm_90 --field colls=256");
  CHECK(misspelt.code == 2);
  CHECK_MESSAGE(contains(misspelt.output, R"(field "colls" is not read by softmax)"), misspelt.output);
  const Result misplaced = run_kjit("inspect --explain --op log_softmax --cols 128 --k 5 --arch sm_90");
  CHECK(misplaced.code == 2);
  CHECK_MESSAGE(contains(misplaced.output, R"(field "k" is not read by log_softmax)"), misplaced.output);
  const Result read = run_kjit("inspect --explain --op softmax_topk --cols 128 --k 5 --arch sm_90");
  CHECK_MESSAGE(read.code == 0, read.output);
}

TEST_CASE("an unknown KJIT_LOG_LEVEL is named, not taken as \"off\"") {
  // spdlog reads a name it does not know as "off": every warning, the unsafe-folder ones too,
  // went missing without a word.
  TempDir dir;
  const Result verify = run_kjit("cache verify --cache-dir " + dir / "cache", "KJIT_LOG_LEVEL=loud");
  CHECK(verify.code == 2);
  CHECK_MESSAGE(contains(verify.output, "KJIT_LOG_LEVEL='loud' is not one of trace, debug"),
                verify.output);
  const Result known = run_kjit("cache verify --cache-dir " + dir / "cache", "KJIT_LOG_LEVEL=error");
  CHECK_MESSAGE(known.code == 0, known.output);
}

TEST_CASE("names in messages are quoted whole, NUL and control characters included") {
  TempDir dir;
  const std::string spec = write_file(dir, "nul.json", R"({"ops": ["soft\u0000max\u001b[2J"], "cols": [8]})");
  const Result result = precompile(dir / "cache", spec);
  INFO(result.output);
  CHECK(result.code == 2);
  CHECK(contains(result.output, R"(op "soft\u0000max\u001b[2J" is not one of)"));
}
