// JS-style object/array literals (the ENVS `{url:"http://h:8080/x",n:5}`
// dialect) converted to compact strict JSON.
//
// Accepted: identifier or quoted keys, single- or double-quoted strings (JSON
// escapes plus \'), bare words, numbers, true/false/null, nesting, trailing
// commas, whitespace between tokens. Emitted: compact JSON with keys in the
// order written, strings escaped as nlohmann::json does, and every number's
// text exactly as written.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac::config {

// Parses the literal that starts at text[pos] (which must be '{' or '[') and
// leaves pos just past its closing bracket. Errors (ConfigInvalid) describe
// the problem and its offset from the literal's start, never the text.
Result<std::string> js_literal_to_json(std::string_view text, std::size_t& pos);

// A bare word's meaning: true/false/null and strict JSON numbers are kept as
// JSON tokens, anything else is a string.
bool is_json_number(std::string_view word) noexcept;

}  // namespace cosmicac::config
