// What `apply` compares: a rendered object with the live one.
#pragma once

#include "host/base/yaml_json.hpp"

#include <string>
#include <vector>

namespace cosmicac::host {

// The fields we render that the live object does not hold with the same value
// ("spec.domain.cpu.cores"). Fields the server added (defaults, status) are not
// differences; quantities compare by value ("1024Mi" == "1Gi"); lists compare
// item by item and by length.
std::vector<std::string> rendered_differences(Json const& rendered, Json const& live, std::string const& at);

}  // namespace cosmicac::host
