// SPDX-License-Identifier: Apache-2.0
#include "cache/bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "cache/digest.h"
#include "cache/file_io.h"
#include "runtime/log.h"

namespace kjit::cache {
namespace {

std::string item_key(std::string_view kind, std::string_view digest) {
  return std::string(kind) + "/" + std::string(digest);
}

// pread loop; returns 0 or an errno value (EIO for a file that shrank under us).
int read_at(int fd, std::uint64_t offset, std::uint64_t size, std::string& out) {
  out.resize(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, &out[done], out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Bundles are often installed by root beside the application, so root may own one; anyone
// else but us, or write access for group/others, means its code cannot be trusted.
std::string bundle_owner_problem(const struct stat& st) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0) return "owned by another user";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "writable by group or others";
  return {};
}

}  // namespace

Bundle::Bundle(const std::string& path) : path_(path) {
  if (!open_checked(path)) {
    log().warn("ignoring cache bundle '{}': {}", path, problem_);
    close();
    order_.clear();
    items_.clear();
  }
}

Bundle::~Bundle() { close(); }

Bundle::Bundle(Bundle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      problem_(std::move(other.problem_)),
      order_(std::move(other.order_)),
      items_(std::move(other.items_)) {}

Bundle& Bundle::operator=(Bundle&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    problem_ = std::move(other.problem_);
    order_ = std::move(other.order_);
    items_ = std::move(other.items_);
  }
  return *this;
}

void Bundle::close() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

bool Bundle::open_checked(const std::string& path) {
  // O_NONBLOCK: a FIFO named as a bundle opens at once (and is refused below) instead of
  // waiting for a writer. The name itself may be a link: a deployment often installs one.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    problem_ = errno_text(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    problem_ = "it is " + file_type_name(st.st_mode) + ", not a regular file";
    return false;
  }
  if (problem_ = bundle_owner_problem(st); !problem_.empty()) return false;
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::string bytes;
  BundleHeader header;
  if (file_size < kBundleHeaderSize) {
    problem_ = "file shorter than a bundle header";
    return false;
  }
  if (int error = read_at(fd_, 0, kBundleHeaderSize, bytes); error != 0) {
    problem_ = errno_text(error);
    return false;
  }
  if (!parse_bundle_header(bytes, file_size, header, problem_)) return false;
  if (int error = read_at(fd_, header.index_offset, header.index_size, bytes); error != 0) {
    problem_ = errno_text(error);
    return false;
  }
  std::vector<BundleItem> items;
  if (!parse_bundle_index(bytes, header, items, problem_)) return false;
  return check_entries(items);
}

// Every entry is decoded once here, so a damaged bundle is refused as a whole at start-up
// rather than failing key by key later.
bool Bundle::check_entries(const std::vector<BundleItem>& items) {
  for (const BundleItem& item : items) {
    std::string bytes;
    if (int error = read_at(fd_, item.offset, item.size, bytes); error != 0) {
      problem_ = errno_text(error);
      return false;
    }
    DecodeResult decoded = decode_entry(bytes);
    if (!decoded || decoded.entry->kind != item.kind ||
        digest_hex(decoded.entry->key_text) != item.digest) {
      problem_ = "entry at offset " + std::to_string(item.offset) + " is invalid" +
                 (decoded ? std::string(" (index does not match it)") : ": " + decoded.reason);
      return false;
    }
    items_[item_key(item.kind, item.digest)] = item;
  }
  order_ = items;
  return true;
}

std::optional<Entry> Bundle::read(const BundleItem& item,
                                  const std::string* expected_key_text) const {
  std::string bytes;
  if (read_at(fd_, item.offset, item.size, bytes) != 0) return std::nullopt;
  std::optional<std::string_view> expected;
  if (expected_key_text) expected = *expected_key_text;
  // Decoded again: the checksum then also guards against the file changing after open.
  DecodeResult decoded = decode_entry(bytes, expected);
  if (!decoded) return std::nullopt;
  return std::move(decoded.entry);
}

std::optional<Entry> Bundle::get(std::string_view kind, const std::string& key_text) const {
  if (fd_ < 0) return std::nullopt;
  auto found = items_.find(item_key(kind, digest_hex(key_text)));
  if (found == items_.end()) return std::nullopt;
  return read(found->second, &key_text);
}

void Bundle::for_each(const std::function<void(const Entry&)>& visit) const {
  if (fd_ < 0) return;
  for (const BundleItem& item : order_) {
    if (std::optional<Entry> entry = read(item, nullptr)) visit(*entry);
  }
}

}  // namespace kjit::cache
