// SPDX-License-Identifier: Apache-2.0
#include "cache/dir_safety.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cache/file_io.h"

namespace kjit::cache {
namespace {

// mkdir on each missing prefix: only the folders created here get 0700; existing parents such
// as $HOME keep their modes. Returns the first errno that stopped the walk, or 0.
int create_with_parents(const std::string& dir) {
  int first_error = 0;
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (prefix.empty() || prefix.back() == '/') continue;
    int error = make_private_dir(prefix);
    if (error != 0 && first_error == 0) first_error = error;
    if (error != 0) break;
  }
  return first_error;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string ownership_problem(const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return "owned by uid " + std::to_string(st.st_uid) + ", not by the current uid " +
           std::to_string(::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "writable by group or others (mode " + octal_mode(st.st_mode) + ")";
  return {};
}

DirCheck prepare_private_dir(const std::string& dir) {
  DirCheck check;
  const int create_error = create_with_parents(dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    check.access = DirAccess::kMissing;
    check.reason = "cannot create '" + dir + "': " + errno_text(create_error ? create_error : errno);
    return check;
  }
  if (!S_ISDIR(st.st_mode)) {
    check.access = DirAccess::kMissing;
    check.reason = "'" + dir + "' is not a directory";
    return check;
  }
  if (std::string problem = ownership_problem(st); !problem.empty()) {
    check.access = DirAccess::kUnsafe;
    check.reason = "'" + dir + "' is " + problem;
    return check;
  }
  // AT_EACCESS: judge by the effective uid, the one that will create files.
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
    check.access = DirAccess::kReadOnly;
    check.reason = "'" + dir + "' is not writable: " + errno_text(errno);
    return check;
  }
  check.access = DirAccess::kReadWrite;
  return check;
}

}  // namespace kjit::cache
