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
// the same inode even if the path is replaced while reading.
int read_checked(const std::string& path, LoadedEntry& loaded, std::string& bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno;
  int error = ::fstat(fd, &loaded.st) == 0 ? 0 : errno;
  if (error == 0 && S_ISREG(loaded.st.st_mode)) error = read_all(fd, bytes);
  ::close(fd);
  return error;
}

}  // namespace

LoadedEntry load_entry_file(const std::string& path, std::string_view kind,
                            const std::string& digest, const std::string* expected_key_text,
                            bool keep_bytes) {
  using State = LoadedEntry::State;
  LoadedEntry loaded;
  std::string bytes;
  if (int error = read_checked(path, loaded, bytes); error != 0) {
    // O_NOFOLLOW on a symlink fails with ELOOP: nothing we wrote, so it is bad, not missing.
    if (error == ELOOP) {
      ::lstat(path.c_str(), &loaded.st);
      return with_state(std::move(loaded), State::kBad, "is a symbolic link");
    }
    if (error == ENOENT) return with_state(std::move(loaded), State::kMissing, "no such file");
    return with_state(std::move(loaded), State::kUnreadable, errno_text(error));
  }
  if (!S_ISREG(loaded.st.st_mode))
    return with_state(std::move(loaded), State::kBad, "not a regular file");
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

bool remove_if_unchanged(const std::string& path, const struct stat& seen) {
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0) return false;
  if (now.st_dev != seen.st_dev || now.st_ino != seen.st_ino) return false;
  return ::unlink(path.c_str()) == 0;
}

}  // namespace kjit::cache
