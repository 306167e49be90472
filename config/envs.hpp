// ENVS: the legacy one-line environment list (docs/configuration.md, "ENVS").
//
// Parsed as data, never as shell: entries split on top-level ';', KEY=VALUE,
// JS-style object/array literals emitted as strict compact JSON, quoted values
// unquoted, everything else literal.
#pragma once

#include "common/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cosmicac::config {

// Docker's Env array: "KEY=VALUE" strings, in the order given; a key given
// twice is an error. Linear in the input's size. Errors (reason ConfigInvalid)
// name the entry's 1-based position, its key when the key is a valid name, and
// a fixed reason: never any other text of the input.
Result<std::vector<std::string>> parse_envs(std::string_view envs);

// One variable for the encoder: a plain string, or a JSON object/array that the
// container must receive as compact JSON.
using EnvValue = std::variant<std::string, nlohmann::json>;

// The inverse of parse_envs: an ENVS string that parses back to exactly
// "KEY=<value>" for each pair (JSON values as nlohmann's compact dump()).
// Errors (ConfigInvalid) for a key that is not a POSIX environment name (not
// echoed) and for a key given twice.
Result<std::string> encode_envs(std::vector<std::pair<std::string, EnvValue>> const& vars);

// Docker's Env array as compact JSON (`cosmicac-bootstrap parse-envs`).
std::string envs_to_json_array(std::vector<std::string> const& env);

// True for a POSIX environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(std::string_view name) noexcept;

}  // namespace cosmicac::config
