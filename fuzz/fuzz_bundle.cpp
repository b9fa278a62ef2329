// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a bundle file (KJIT_CACHE_BUNDLE, `kjit cache import`), opened and read as
// the runtime and import do. Each input is tried as it is and resealed: its index size, index
// checksum, header checksum and the checksum of every entry the index points at made right, as
// a forger would, so the fuzzer reaches the index and the entries behind the checksums. The
// reader works on files, so each input goes to a private temp file first.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cache/bundle.h"
#include "cache/bundle_format.h"
#include "cache/byte_io.h"
#include "cache/digest.h"
#include "runtime/log.h"

namespace {

using kjit::cache::ByteReader;
using kjit::cache::checksum64;

void put_u64_at(std::string& bytes, std::size_t at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}

std::uint64_t u64_at(const std::string& bytes, std::size_t at) {
  return ByteReader(std::string_view(bytes).substr(at, 8)).get_u64();
}

// Header: magic(8) version(4) flags(4) count(8)@16 index_offset(8)@24 index_size(8)@32
// index_checksum(8)@40 header_checksum(8)@48; index items: u32+kind u32+digest u64 offset u64 size.
std::string resealed(std::string bytes) {
  if (bytes.size() < kjit::cache::kBundleHeaderSize) return bytes;
  const std::uint64_t index_offset = u64_at(bytes, 24);
  if (index_offset < kjit::cache::kBundleHeaderSize || index_offset > bytes.size()) return bytes;
  const std::string_view index = std::string_view(bytes).substr(index_offset);
  ByteReader reader(index);
  for (std::uint64_t i = 0, count = u64_at(bytes, 16); i < count && reader.ok(); ++i) {
    reader.get_blob32();
    reader.get_blob32();
    const std::uint64_t offset = reader.get_u64(), size = reader.get_u64();
    if (reader.ok() && size >= 8 && offset <= index_offset && size <= index_offset - offset)
      put_u64_at(bytes, offset + size - 8, checksum64(std::string_view(bytes).substr(offset, size - 8)));
  }
  put_u64_at(bytes, 32, bytes.size() - index_offset);
  put_u64_at(bytes, 40, checksum64(std::string_view(bytes).substr(index_offset)));
  put_u64_at(bytes, 48, checksum64(std::string_view(bytes).substr(0, 48)));
  return bytes;
}

void check(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) __builtin_trap();
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
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
}

/// The private temp file inputs are written to, removed when the fuzzer exits.
struct InputFile {
  InputFile() {
    kjit::log().set_level(spdlog::level::off);  // every damaged bundle would log a warning
    // Memory-backed where there is /dev/shm: rewriting a file on disk for every input is slow.
    const char* base = std::getenv("TMPDIR");
    const std::string folder =
        base && *base ? base : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = folder + "/kjit-fuzz-bundle-" + std::to_string(::getpid());
  }
  ~InputFile() { ::unlink(path.c_str()); }
  std::string path;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const InputFile file;
  const std::string input(reinterpret_cast<const char*>(data), size);
  check(file.path, input);
  check(file.path, resealed(input));
  return 0;
}
