// JS-style object/array literals (the ENVS `{url:"http://h:8080/x",n:5}`
// dialect) converted to compact strict JSON.
//
// Accepted: identifier or quoted keys, single- or double-quoted strings (JSON
// escapes plus \'), bare words, numbers, true/false/null, nesting, trailing
// commas, whitespace between tokens. Emitted: compact JSON with keys in the
// order written, strings escaped as nlohmann::json does, and every number's
// text exactly as written.
#pragma once

#include "config/fixed_text.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace cosmicac::config {

// Why a literal was refused: a fixed reason and where, as an offset from the
// literal's first character. It holds nothing of the text by construction.
struct LiteralProblem {
  FixedText what;
  std::size_t offset = 0;
};

// "<what> at offset <n> of the literal".
std::string describe(LiteralProblem const& problem);

// Parses the literal that starts at text[pos] (which must be '{' or '[') and
// leaves pos just past its closing bracket; pos is unchanged on a problem.
// Linear in the literal's size (duplicate keys are found with a hash set).
std::variant<std::string, LiteralProblem> js_literal_to_json(std::string_view text, std::size_t& pos);

// A bare word's meaning: true/false/null and strict JSON numbers are kept as
// JSON tokens, anything else is a string.
bool is_json_number(std::string_view word) noexcept;

}  // namespace cosmicac::config
