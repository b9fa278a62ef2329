// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the bytes of one cache entry file, decoded as get() and verify() decode
// them. Each input is tried as it is, and with its last 8 bytes replaced by the right checksum
// of the rest: whoever plants a file can compute the checksum too, and the fuzzer should reach
// the lengths, the kind and the metadata behind it. A decoded entry must encode back to bytes
// that decode to the same entry.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/byte_io.h"
#include "cache/digest.h"
#include "cache/entry_format.h"

namespace {

void check(std::string_view bytes) {
  using kjit::cache::decode_entry;
  const kjit::cache::DecodeResult decoded = decode_entry(bytes);
  decode_entry(bytes, std::string_view("{\"kind\":\"cubin\"}"));
  if (!decoded) return;
  const kjit::cache::Entry& entry = *decoded.entry;
  const kjit::cache::DecodeResult again = decode_entry(kjit::cache::encode_entry(entry));
  if (!again || again.entry->kind != entry.kind || again.entry->key_text != entry.key_text ||
      again.entry->payload != entry.payload || again.entry->metadata != entry.metadata ||
      again.entry->facts.registers != entry.facts.registers ||
      again.entry->facts.winner != entry.facts.winner)
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check(input);
  if (size < 8) return 0;
  std::string resealed(input.substr(0, size - 8));
  kjit::cache::ByteWriter(resealed).put_u64(kjit::cache::checksum64(resealed));
  check(resealed);
  return 0;
}
