// SPDX-License-Identifier: Apache-2.0
#include "cache/digest.h"

#include <cstddef>

namespace kjit::cache {
namespace {

// Odd 64-bit constants with well-spread bits; any change here renames every cache file, so the
// layout version in disk_cache.cpp must move with them.
constexpr std::uint64_t kMulA = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kMulB = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kMulC = 0x165667B19E3779F9ull;
constexpr std::uint64_t kChecksumSeed = 0x6B6A69742D636B73ull;

struct Lanes {
  std::uint64_t a;
  std::uint64_t b;
};

std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Bytes are assembled explicitly rather than memcpy-ed so the result does not depend on the
// host's endianness.
std::uint64_t load_le(const unsigned char* p, std::size_t count) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < count; ++i) word |= std::uint64_t(p[i]) << (8 * i);
  return word;
}

std::uint64_t avalanche(std::uint64_t x) {
  x ^= x >> 33;
  x *= kMulB;
  x ^= x >> 29;
  x *= kMulC;
  x ^= x >> 32;
  return x;
}

// Each lane takes every word through its own multiply-rotate and then feeds on the other
// lane, so a difference that cancels in one lane still shows in the other.
void absorb(Lanes& s, std::uint64_t word) {
  s.a ^= rotl(word * kMulA, 31) * kMulB;
  s.a = (rotl(s.a, 27) + s.b) * 5 + 0x52DCE729;
  s.b ^= rotl(word * kMulC, 33) * kMulA;
  s.b = (rotl(s.b, 31) + s.a) * 5 + 0x38495AB5;
}

Lanes mix128(std::string_view bytes, std::uint64_t seed) {
  Lanes s{seed ^ kMulA, rotl(seed, 32) ^ kMulC};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t size = bytes.size();
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) absorb(s, load_le(p + i, 8));
  // The tail (0-7 bytes) always gets absorbed, with its length in the top byte, so "" and
  // "\0" differ and trailing zero bytes are never lost.
  const std::size_t tail = size - i;
  absorb(s, load_le(p + i, tail) | (std::uint64_t(tail) << 56));
  s.a ^= static_cast<std::uint64_t>(size);
  s.b ^= rotl(static_cast<std::uint64_t>(size), 32);
  s.a += s.b;
  s.b += s.a;
  s.a = avalanche(s.a);
  s.b = avalanche(s.b);
  s.a += s.b;
  s.b += s.a;
  return s;
}

void append_hex(std::string& out, std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kDigits[(value >> shift) & 0xF]);
}

}  // namespace

std::string digest_hex(std::string_view bytes) {
  Lanes s = mix128(bytes, 0);
  std::string hex;
  hex.reserve(32);
  append_hex(hex, s.a);
  append_hex(hex, s.b);
  return hex;
}

std::uint64_t checksum64(std::string_view bytes) { return mix128(bytes, kChecksumSeed).a; }

}  // namespace kjit::cache
