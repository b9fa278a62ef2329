// SPDX-License-Identifier: Apache-2.0
// JSON from outside the process (spec files, cache entries, tuning logs) parsed with a limit on
// nesting. nlohmann's parser is iterative, but copying, comparing and printing a value recurse
// once per level, so a value nested 100,000 deep would overflow the stack later, far from the
// input that caused it. The limit is checked before any value is built.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kjit {

/// Deepest nesting accepted: kjit's own documents (specs, keys, metadata, tuning logs) use at
/// most 4 levels.
inline constexpr std::size_t kMaxJsonDepth = 32;

/// Parses `text` nested at most `max_depth` levels. On failure returns nullopt and sets
/// `problem` to the parser's message or "nested deeper than N levels".
std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& problem,
                                                 std::size_t max_depth = kMaxJsonDepth);
/// The same, keeping object keys in file order.
std::optional<nlohmann::ordered_json> parse_ordered_json_bounded(
    std::string_view text, std::string& problem, std::size_t max_depth = kMaxJsonDepth);

}  // namespace kjit
