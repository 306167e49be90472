#include "host/base/json_read.hpp"

namespace cosmicac::host {

Json const* find_at(Json const& j, JsonPath keys) {
  Json const* at = &j;
  for (auto key : keys) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(std::string(key));
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at->is_null() ? nullptr : at;
}

Json const& value_at(Json const& j, JsonPath keys) {
  static Json const kNull;
  Json const* v = find_at(j, keys);
  return v ? *v : kNull;
}

std::string string_at(Json const& j, JsonPath keys, std::string const& fallback) {
  Json const* v = find_at(j, keys);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

Json const& object_at(Json const& j, JsonPath keys) {
  static Json const kEmpty = Json::object();
  Json const* v = find_at(j, keys);
  return v && v->is_object() ? *v : kEmpty;
}

Json const& array_at(Json const& j, JsonPath keys) {
  static Json const kEmpty = Json::array();
  Json const* v = find_at(j, keys);
  return v && v->is_array() ? *v : kEmpty;
}

std::optional<Json> parse_json(std::string_view text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace cosmicac::host
