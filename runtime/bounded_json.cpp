// SPDX-License-Identifier: Apache-2.0
#include "runtime/bounded_json.h"

namespace kjit {
namespace {

/// A SAX pass that builds nothing: it only tracks the nesting and stops at the first level too
/// deep or the first syntax error.
class DepthCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit DepthCheck(std::size_t max_depth) : max_depth_(max_depth) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    problem_ = error.what();
    return false;
  }

  const std::string& problem() const { return problem_; }

 private:
  bool enter() {
    if (++depth_ <= max_depth_) return true;
    problem_ = "nested deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  bool leave() {
    --depth_;
    return true;
  }

  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::string problem_;
};

template <typename Json>
std::optional<Json> parse_bounded(std::string_view text, std::string& problem,
                                  std::size_t max_depth) {
  DepthCheck check(max_depth);
  if (!nlohmann::json::sax_parse(text, &check)) {
    problem = check.problem().empty() ? "not valid JSON" : check.problem();
    return std::nullopt;
  }
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    problem = "not valid JSON";
    return std::nullopt;
  }
  return parsed;
}

}  // namespace

std::optional<nlohmann::json> parse_json_bounded(std::string_view text, std::string& problem,
                                                 std::size_t max_depth) {
  return parse_bounded<nlohmann::json>(text, problem, max_depth);
}

std::optional<nlohmann::ordered_json> parse_ordered_json_bounded(std::string_view text,
                                                                 std::string& problem,
                                                                 std::size_t max_depth) {
  return parse_bounded<nlohmann::ordered_json>(text, problem, max_depth);
}

}  // namespace kjit
