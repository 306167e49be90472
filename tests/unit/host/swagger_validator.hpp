// A Swagger 2.0 schema validator for the subset the KubeVirt and CDI specs use
// in the objects cosmicac-vmi renders: $ref into #/definitions, type (also a
// list of types), required, properties, additionalProperties (schema/true;
// false or absent on an object with properties = closed, as the API server's
// strict field validation treats unknown fields), items, enum, and the formats
// int32/int64, int-or-string and Quantity (resource.Quantity's grammar).
//
// Written for the tests because no Debian package validates Swagger 2.0 (with
// its #/definitions $refs) from C++: the packaged JSON-schema validators target
// draft 7+ documents, not Swagger's dialect.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cosmicac::test {

class SwaggerValidator {
 public:
  explicit SwaggerValidator(nlohmann::json swagger);
  // Loads a file; throws std::runtime_error naming it when missing/invalid.
  static SwaggerValidator load(std::string const& path);

  // One message per violation, each with its JSON path ("spec.domain.devices.disks[2].cdrom.bus: ...").
  std::vector<std::string> validate(std::string const& definition, nlohmann::json const& value) const;
  bool has_definition(std::string const& name) const;

 private:
  void check(nlohmann::json const& schema, nlohmann::json const& value, std::string const& path,
             std::vector<std::string>& errors, int depth) const;
  nlohmann::json swagger_;
};

}  // namespace cosmicac::test
