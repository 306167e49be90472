#include "engine/http_error.hpp"

#include <nlohmann/json.hpp>

namespace cosmicac::engine {

std::string error_message(std::string_view body) {
  if (!body.empty() && body.front() == '{') {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  }
  std::string s(body.substr(0, 300));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

Error http_error(Reason reason, std::string_view what, Response const& response) {
  std::string msg = std::string(what) + ": HTTP " + std::to_string(response.status);
  std::string const detail = error_message(response.body);
  if (!detail.empty()) msg += ": " + detail;
  return make_error(reason, std::move(msg), response.status >= 500);
}

}  // namespace cosmicac::engine
