// SPDX-License-Identifier: Apache-2.0
#include "cache/entry_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cache/digest.h"
#include "cache/dir_safety.h"
#include "cache/file_io.h"

namespace kjit::cache {
namespace {

LoadedEntry with_state(LoadedEntry loaded, LoadedEntry::State state, std::string problem) {
  loaded.state = state;
  loaded.problem = std::move(problem);
  return loaded;
}

// Read through one descriptor so the stat, the ownership check and the bytes all describe
// the same inode even if the name is replaced while reading. Only a regular file of a
// plausible size is read at all.
int read_checked(const CacheFolder& shard, const std::string& name, LoadedEntry& loaded,
                 std::string& bytes) {
  const int fd = shard.open_item(name);
  if (fd < 0) return -fd;
  int error = ::fstat(fd, &loaded.st) == 0 ? 0 : errno;
  const bool readable = S_ISREG(loaded.st.st_mode) &&
                        static_cast<std::uint64_t>(loaded.st.st_size) <= kMaxEntryBytes;
  if (error == 0 && readable) error = read_all(fd, kMaxEntryBytes, bytes);
  ::close(fd);
  return error;
}

}  // namespace

LoadedEntry load_entry_file(const CacheFolder& shard, const std::string& name, std::string_view kind,
                            const std::string& digest, const std::string* expected_key_text,
                            bool keep_bytes) {
  using State = LoadedEntry::State;
  LoadedEntry loaded;
  std::string bytes;
  if (int error = read_checked(shard, name, loaded, bytes); error != 0) {
    if (error == ENOENT) return with_state(std::move(loaded), State::kMissing, "no such file");
    // A link (ELOOP under O_NOFOLLOW) or a socket (ENXIO) cannot be opened as a file: nothing
    // we wrote, so it is bad, not unreadable.
    if (shard.stat_item(name, loaded.st) == 0 && !S_ISREG(loaded.st.st_mode))
      return with_state(std::move(loaded), State::kBad,
                        "is " + file_type_name(loaded.st.st_mode) + ", not a regular file");
    if (error == EFBIG)
      return with_state(std::move(loaded), State::kBad, "grew past the size an entry may have");
    return with_state(std::move(loaded), State::kUnreadable, errno_text(error));
  }
  if (!S_ISREG(loaded.st.st_mode))
    return with_state(std::move(loaded), State::kBad, "is " + file_type_name(loaded.st.st_mode) +
                                                          ", not a regular file");
  if (static_cast<std::uint64_t>(loaded.st.st_size) > kMaxEntryBytes)
    return with_state(std::move(loaded), State::kBad,
                      std::to_string(loaded.st.st_size) + " bytes, more than an entry may have (" +
                          std::to_string(kMaxEntryBytes) + ")");
  if (std::string unsafe = ownership_problem(loaded.st); !unsafe.empty())
    return with_state(std::move(loaded), State::kBad, "refused: " + unsafe);
  std::optional<std::string_view> expected;
  if (expected_key_text) expected = *expected_key_text;
  DecodeResult decoded = decode_entry(bytes, expected);
  if (!decoded) return with_state(std::move(loaded), State::kBad, decoded.reason);
  // The folder and file name must agree with the contents, or a renamed file could answer
  // for a key it was not made for.
  if (decoded.entry->kind != kind)
    return with_state(std::move(loaded), State::kBad, "entry of kind '" + decoded.entry->kind + "'");
  if (digest_hex(decoded.entry->key_text) != digest)
    return with_state(std::move(loaded), State::kBad, "file name does not match the key digest");
  loaded.state = State::kGood;
  loaded.entry = std::move(decoded.entry);
  if (keep_bytes) loaded.bytes = std::move(bytes);
  return loaded;
}

LoadedEntry load_entry_at(const CacheLayout& layout, std::string_view kind, const std::string& shard,
                          const std::string& name, const std::string& digest,
                          const std::string* expected_key_text, bool keep_bytes) {
  int error = 0;
  std::string problem;
  const CacheFolder folder = layout.open_shard(kind, shard, /*create=*/false, error, problem);
  if (!folder.valid()) {
    LoadedEntry loaded;
    loaded.state = error == ENOENT ? LoadedEntry::State::kMissing : LoadedEntry::State::kUnreadable;
    loaded.problem = problem;
    return loaded;
  }
  return load_entry_file(folder, name, kind, digest, expected_key_text, keep_bytes);
}

}  // namespace kjit::cache
