// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a bundle file (KJIT_CACHE_BUNDLE, `kjit cache import`), opened and read as
// the runtime and import do. The input is written to a private temp file, since the reader
// works on a file (it trusts no size the file claims).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cache/bundle.h"
#include "runtime/log.h"

namespace {

std::string temp_path() {
  const char* base = std::getenv("TMPDIR");
  return std::string(base && *base ? base : "/tmp") + "/kjit-fuzz-bundle-" + std::to_string(::getpid());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = [] {
    kjit::log().set_level(spdlog::level::off);  // every damaged bundle would log a warning
    return temp_path();
  }();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) __builtin_trap();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) __builtin_trap();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  kjit::cache::Bundle bundle(path);
  std::size_t seen = 0;
  bundle.for_each([&](const kjit::cache::Entry& entry) {
    ++seen;
    if (!bundle.get(entry.kind, entry.key_text)) __builtin_trap();  // the index finds every entry
  });
  if (seen < bundle.size()) __builtin_trap();  // every key of the index was read back
  return 0;
}
