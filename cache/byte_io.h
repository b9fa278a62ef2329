// SPDX-License-Identifier: Apache-2.0
// Little-endian integer and length-prefixed string I/O shared by the entry and bundle formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// Appends fixed-width little-endian integers and length-prefixed blobs to a string.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}

  /// Appends `value` as `bytes` little-endian bytes; byte order is fixed so files move between hosts.
  void put_uint(std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }
  void put_u32(std::uint32_t value) { put_uint(value, 4); }
  void put_u64(std::uint64_t value) { put_uint(value, 8); }
  /// Appends raw bytes with no length prefix.
  void put_raw(std::string_view bytes) { out_.append(bytes.data(), bytes.size()); }
  /// Appends a u32 length followed by the bytes.
  void put_blob32(std::string_view bytes) {
    put_u32(static_cast<std::uint32_t>(bytes.size()));
    put_raw(bytes);
  }

 private:
  std::string& out_;
};

/// Reads what ByteWriter wrote; every read checks bounds and latches a failure flag instead
/// of throwing, so decoders can read a whole header and test ok() once.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  /// Reads a `bytes`-wide little-endian integer; 0 and a latched failure when out of data.
  std::uint64_t get_uint(int bytes) {
    if (!take(static_cast<std::size_t>(bytes))) return 0;
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i)
      value |= std::uint64_t(static_cast<unsigned char>(in_[pos_ - bytes + i])) << (8 * i);
    return value;
  }
  std::uint32_t get_u32() { return static_cast<std::uint32_t>(get_uint(4)); }
  std::uint64_t get_u64() { return get_uint(8); }
  /// Reads `size` raw bytes; empty and a latched failure when out of data.
  std::string_view get_raw(std::uint64_t size) {
    if (size > remaining()) ok_ = false;  // checked first: the cast below could truncate
    if (!take(static_cast<std::size_t>(size))) return {};
    return in_.substr(pos_ - static_cast<std::size_t>(size), static_cast<std::size_t>(size));
  }
  /// Reads a u32 length and that many bytes.
  std::string_view get_blob32() { return get_raw(get_u32()); }

  bool ok() const { return ok_; }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  bool take(std::size_t size) {
    if (!ok_ || size > remaining()) {
      ok_ = false;
      return false;
    }
    pos_ += size;
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace kjit::cache
