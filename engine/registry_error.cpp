#include "engine/registry_error.hpp"

#include "engine/http_error.hpp"

#include <cctype>
#include <string>

namespace cosmicac::engine {
namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }
}  // namespace

Error classify_pull_error(std::string_view message, long http_status) {
  std::string const m = lower(message);
  std::string text(message.substr(0, 500));
  if (http_status == 401 || contains(m, "unauthorized") || contains(m, "denied") ||
      contains(m, "authentication required") || contains(m, "incorrect username or password"))
    return make_error(Reason::Auth, std::move(text));
  // Network-level faults first: "i/o timeout" messages may also say "not found" of a DNS name.
  if (http_status >= 500 || contains(m, "timeout") || contains(m, "connection refused") ||
      contains(m, "connection reset") || contains(m, "no such host") || contains(m, "eof") ||
      contains(m, "network is unreachable") || contains(m, "tls handshake") || contains(m, "temporary failure") ||
      contains(m, "too many requests") || contains(m, "service unavailable") || contains(m, "bad gateway"))
    return make_error(Reason::RegistryUnreachable, std::move(text), true);
  if (http_status == 404 || contains(m, "manifest unknown") || contains(m, "not found") ||
      contains(m, "does not exist") || contains(m, "repository name not known") || contains(m, "name unknown"))
    return make_error(Reason::ImageNotFound, std::move(text));
  return make_error(Reason::RegistryUnreachable, std::move(text), false);
}

std::optional<Error> registry_answer_error(std::string_view what, Result<Response> const& answer) {
  if (!answer) {
    Error e = answer.error();
    e.reason = Reason::RegistryUnreachable;
    e.message = std::string(what) + ": " + e.message;
    return e;
  }
  if (answer->status == 200) return std::nullopt;
  Error e = classify_pull_error(error_message(answer->body), answer->status);
  e.message = std::string(what) + ": HTTP " + std::to_string(answer->status) + ": " + e.message;
  return e;
}

}  // namespace cosmicac::engine
