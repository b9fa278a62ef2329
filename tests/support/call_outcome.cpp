// SPDX-License-Identifier: Apache-2.0
#include "support/call_outcome.h"

#include <cctype>


namespace kjit::test {

std::pair<Status, std::string> outcome(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return {error.status(), error.what()};
  }
  return {Status::kSuccess, {}};
}

bool names_argument(const std::string& message, const std::string& name) {
  auto is_word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
    const bool starts = at == 0 || !is_word_char(message[at - 1]);
    const std::size_t end = at + name.size();
    const bool ends = end == message.size() || !is_word_char(message[end]);
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace kjit::test
