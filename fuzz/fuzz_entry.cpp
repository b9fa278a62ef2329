// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the bytes of one cache entry file, decoded as get() and verify() decode
// them. A decoded entry must encode back to bytes that decode to the same entry.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/entry_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const kjit::cache::DecodeResult decoded = kjit::cache::decode_entry(bytes);
  kjit::cache::decode_entry(bytes, std::string_view("{\"kind\":\"cubin\"}"));
  if (!decoded) return 0;
  const kjit::cache::Entry& entry = *decoded.entry;
  const kjit::cache::DecodeResult again = kjit::cache::decode_entry(kjit::cache::encode_entry(entry));
  if (!again || again.entry->key_text != entry.key_text || again.entry->payload != entry.payload ||
      again.entry->metadata != entry.metadata || again.entry->facts.registers != entry.facts.registers)
    __builtin_trap();
  return 0;
}
