// The bridge between YAML text and JSON values: job specs come in as YAML or
// JSON, manifests and user-data go out as YAML. Everything inside cosmicac-vmi
// is an nlohmann::ordered_json (insertion order kept, so output reads in the
// order Kubernetes users expect: apiVersion, kind, metadata, spec).
#pragma once

#include "common/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

using Json = nlohmann::ordered_json;

// Parses one YAML document (or JSON text) into a value. Plain YAML scalars are
// typed by the YAML 1.2 core schema (null, bool, int, float, else string);
// quoted scalars are strings. Duplicate mapping keys are an error. Errors
// (ConfigInvalid) name the origin and the line.
Result<Json> parse_yaml_or_json(std::string_view text, std::string_view origin);

// One YAML document for a value. Strings that a YAML 1.1 or 1.2 reader would
// take for something else ("true", "yes", "0755", "1e3", "null") are quoted;
// multi-line strings become literal blocks when that round-trips exactly.
std::string to_yaml(Json const& value);

// A multi-document stream ("---" before each document).
std::string to_yaml_stream(std::vector<Json> const& docs);

}  // namespace cosmicac::host
