// A DiskPlan for people (`cosmicac-bootstrap plan`) and as JSON.
#pragma once

#include "disk/decide.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cosmicac::disk {

std::string describe(DiskPlan const& plan);
nlohmann::json to_json(DiskPlan const& plan);

}  // namespace cosmicac::disk
