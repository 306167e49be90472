// Reading values out of JSON the host did not write (API server replies,
// kubeconfig-adjacent documents): a missing key, a null, or a value of
// another type than expected is "absent", never an exception. Keys name a
// path of nested objects: {"metadata", "labels", "app"}.
#pragma once

#include "host/base/yaml_json.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::host {

using JsonPath = std::initializer_list<std::string_view>;

// The value at keys, or null when a step is no object, lacks the key, or the
// value is null. An empty path is j itself (null when j is null).
Json const* find_at(Json const& j, JsonPath keys);

// The value at keys, or a null value.
Json const& value_at(Json const& j, JsonPath keys);

// The string at keys, or fallback when absent or not a string.
std::string string_at(Json const& j, JsonPath keys, std::string const& fallback = {});

// The object / array at keys, or an empty one when absent or of another type.
Json const& object_at(Json const& j, JsonPath keys);
Json const& array_at(Json const& j, JsonPath keys);

// JSON text as a value, or none when it is not JSON.
std::optional<Json> parse_json(std::string_view text);

}  // namespace cosmicac::host
