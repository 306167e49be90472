// The bridge between YAML text and JSON values: job specs come in as YAML or
// JSON, manifests and user-data go out as YAML. Everything inside cosmicac-vmi
// is an nlohmann::ordered_json (insertion order kept, so output reads in the
// order Kubernetes users expect: apiVersion, kind, metadata, spec).
#pragma once

#include "host/base/host_error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

using Json = nlohmann::ordered_json;

// Parses one YAML document (or JSON text) into a value. Plain YAML scalars are
// typed by the YAML 1.2 core schema (null, bool, int, float, else string);
// quoted scalars are strings. Duplicate mapping keys are an error. Errors
// (Errc::Spec; a caller reading something else retags them) name the origin
// and the line.
Result<Json> parse_yaml_or_json(std::string_view text, std::string_view origin);

// One YAML document for a value, 7-bit ASCII, that YAML 1.1 and 1.2 readers
// (PyYAML/libyaml for cloud-init, go-yaml for Kubernetes, yaml-cpp) read back
// to exactly this value. Strings are plain only when made of a conservative
// set of characters that no reader retypes ("true", "yes", "0755", "1e3",
// "2001-12-14" are quoted); multi-line printable ASCII becomes a literal
// block when that round-trips exactly; everything else is double-quoted with
// escapes (\x85, \u2028 ...). Throws std::logic_error, never returns a
// document, should the emitted text hold anything but printable ASCII and
// line feeds.
std::string to_yaml(Json const& value);

// A multi-document stream ("---" before each document).
std::string to_yaml_stream(std::vector<Json> const& docs);

}  // namespace cosmicac::host
