#include "host/spec/spec_fields.hpp"

#include "common/terminal_text.hpp"
#include "config/image_ref.hpp"
#include "host/base/quantity.hpp"

#include <cmath>
#include <stdexcept>

namespace cosmicac::host::spec_detail {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

void fail(std::string field, std::string message) { throw SpecError{std::move(field), std::move(message)}; }

HostError spec_error(std::string_view origin, SpecError const& e) {
  return host_error(Errc::Spec,
                    terminal_safe(origin) + ": " + terminal_safe(e.field) + ": " + terminal_safe(e.message));
}

bool is_resource_suffix(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

void check_image(std::string const& field, std::string const& image) {
  auto ref = config::parse_image_ref(image);
  if (!ref) fail(field, ref.error().message);
}

void check_subdomain(std::string const& field, std::string const& value) {
  if (!is_dns1123_subdomain(value))
    fail(field, "'" + value + "' is not a valid Kubernetes object name (RFC 1123 subdomain)");
}

Fields::Fields(Json const& obj, std::string prefix, Classifier classified)
    : obj_(obj), prefix_(std::move(prefix)), classified_(classified) {
  if (!obj_.is_object()) fail(prefix_.empty() ? "(top level)" : prefix_, "must be a mapping");
}

Json const* Fields::get(std::string const& key) {
  if (classified_ && !classified_(path(key)))
    throw std::logic_error("the parser reads " + path(key) + ", which the table of fields does not classify");
  used_.insert(key);
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> Fields::str(std::string const& key) {
  Json const* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(path(key), "must be a string");
  std::string s = v->get<std::string>();
  if (s.empty()) fail(path(key), "must not be empty");
  if (s.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) fail(path(key), "must be a single line");
  return s;
}

std::string Fields::required_str(std::string const& key) {
  auto s = str(key);
  if (!s) fail(path(key), "is required");
  return *s;
}

std::optional<long long> Fields::integer(std::string const& key, long long lo, long long hi) {
  Json const* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) fail(path(key), "must be an integer");
  long long n = v->get<long long>();
  if (n < lo || n > hi)
    fail(path(key),
         "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " + std::to_string(n) + ")");
  return n;
}

std::optional<std::string> Fields::quantity(std::string const& key) {
  Json const* v = get(key);
  if (!v) return std::nullopt;
  std::string s;
  if (v->is_string()) s = v->get<std::string>();
  else if (v->is_number_integer()) s = v->dump();
  else fail(path(key), "must be a quantity such as 100Gi");
  auto q = parse_quantity(s);
  if (!q) fail(path(key), q.error().message);
  if (*q <= 0) fail(path(key), "must be positive");
  if (*q != std::floor(*q)) fail(path(key), "must be a whole number of bytes");
  return s;
}

std::optional<Fields> Fields::object(std::string const& key) {
  Json const* v = get(key);
  if (!v) return std::nullopt;
  return Fields(*v, path(key), classified_);
}

void Fields::no_unknown_keys() const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it)
    if (!used_.count(it.key())) fail(path(it.key()), "unknown field");
}

}  // namespace cosmicac::host::spec_detail
