// The KEY=VALUE configuration file format (/etc/default/docker-bootstrap),
// read as data: comments, blank lines, optional `export `, single quotes
// (literal) and double quotes (\" \\ \$ \` \n escapes). Never executed.
#pragma once

#include "common/error.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::config {

struct ConfigEntry {
  std::string key;
  std::string value;
  int line = 0;  // 1-based
};

// Errors (ConfigInvalid) name the origin and line, never the value.
Result<std::vector<ConfigEntry>> parse_config_file(std::string_view text, std::string_view origin);

// Renders entries so that parse_config_file reads back exactly these values
// (used by cosmicac-vmi to write the guest's config through cloud-init).
// Keys must be names ([A-Za-z_][A-Za-z0-9_]*); values may hold any byte but NUL.
// Each header_comment line becomes a `# ` comment.
std::string encode_config_file(std::vector<std::pair<std::string, std::string>> const& entries,
                               std::string_view header_comment = {});

}  // namespace cosmicac::config
