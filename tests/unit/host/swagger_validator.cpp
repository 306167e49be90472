#include "swagger_validator.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace cosmicac::test {
namespace {

bool type_matches(std::string const& type, nlohmann::json const& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

// resource.Quantity: <signedNumber><suffix>, apimachinery's grammar, written
// independently of host/base/quantity.cpp so that the test does not trust the code
// under test.
bool is_quantity(nlohmann::json const& v) {
  if (v.is_number()) return true;
  if (!v.is_string()) return false;
  static const std::regex re(
      R"(^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$)");
  return std::regex_match(v.get<std::string>(), re);
}

}  // namespace

SwaggerValidator::SwaggerValidator(nlohmann::json swagger) : swagger_(std::move(swagger)) {
  if (!swagger_.is_object() || swagger_.value("swagger", "") != "2.0" || !swagger_.contains("definitions"))
    throw std::runtime_error("not a Swagger 2.0 document with definitions");
}

SwaggerValidator SwaggerValidator::load(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("schema file missing: " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return SwaggerValidator(nlohmann::json::parse(ss.str()));
}

bool SwaggerValidator::has_definition(std::string const& name) const { return swagger_["definitions"].contains(name); }

std::vector<std::string> SwaggerValidator::validate(std::string const& definition, nlohmann::json const& value) const {
  std::vector<std::string> errors;
  if (!has_definition(definition)) {
    errors.push_back("no definition " + definition + " in the schema");
    return errors;
  }
  check(nlohmann::json{{"$ref", "#/definitions/" + definition}}, value, "", errors, 0);
  return errors;
}

void SwaggerValidator::check(nlohmann::json const& schema, nlohmann::json const& value, std::string const& path,
                             std::vector<std::string>& errors, int depth) const {
  std::string where = path.empty() ? "(root)" : path;
  if (depth > 64) {
    errors.push_back(where + ": schema recursion too deep");
    return;
  }
  if (schema.contains("$ref")) {
    std::string ref = schema["$ref"].get<std::string>();
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0) {
      errors.push_back(where + ": unsupported $ref " + ref);
      return;
    }
    std::string name = ref.substr(prefix.size());
    auto const& defs = swagger_["definitions"];
    if (!defs.contains(name)) {
      errors.push_back(where + ": dangling $ref " + ref);
      return;
    }
    if (name.size() >= 17 && name.compare(name.size() - 17, 17, "resource.Quantity") == 0) {
      if (!is_quantity(value)) errors.push_back(where + ": '" + value.dump() + "' is not a Quantity");
      return;
    }
    check(defs[name], value, path, errors, depth + 1);
    return;
  }

  std::string format =
      schema.contains("format") && schema["format"].is_string() ? schema["format"].get<std::string>() : "";
  if (format == "int-or-string") {
    if (!value.is_string() && !value.is_number_integer()) errors.push_back(where + ": must be an integer or a string");
    return;
  }
  if (schema.contains("type")) {
    auto const& t = schema["type"];
    bool ok = false;
    std::string names;
    if (t.is_string()) {
      ok = type_matches(t.get<std::string>(), value);
      names = t.get<std::string>();
    } else if (t.is_array()) {
      for (auto const& one : t) {
        ok = ok || type_matches(one.get<std::string>(), value);
        names += (names.empty() ? "" : "|") + one.get<std::string>();
      }
    } else {
      ok = true;  // malformed "type" in the source spec: nothing to check against
    }
    if (!ok) {
      errors.push_back(where + ": expected " + names + ", got " + value.type_name());
      return;
    }
  }
  if (value.is_number_integer() && (format == "int32" || format == "int64")) {
    long long n = value.get<long long>();
    if (format == "int32" && (n < INT32_MIN || n > INT32_MAX)) errors.push_back(where + ": out of int32 range");
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (auto const& e : schema["enum"]) found = found || e == value;
    if (!found) errors.push_back(where + ": " + value.dump() + " is not one of " + schema["enum"].dump());
  }
  if (value.is_object()) {
    if (schema.contains("required"))
      for (auto const& r : schema["required"])
        if (!value.contains(r.get<std::string>()))
          errors.push_back(where + ": missing required field " + r.get<std::string>());
    nlohmann::json const* props = schema.contains("properties") ? &schema["properties"] : nullptr;
    nlohmann::json const* extra = schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string child = path.empty() ? it.key() : path + "." + it.key();
      if (props && props->contains(it.key())) {
        check((*props)[it.key()], it.value(), child, errors, depth + 1);
      } else if (extra && extra->is_object()) {
        check(*extra, it.value(), child, errors, depth + 1);
      } else if (extra && extra->is_boolean() && extra->get<bool>()) {
        // open map
      } else if (props || (extra && extra->is_boolean())) {
        errors.push_back(child + ": unknown field");
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i)
      check(schema["items"], value[i], path + "[" + std::to_string(i) + "]", errors, depth + 1);
  }
}

}  // namespace cosmicac::test
