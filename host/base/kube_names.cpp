#include "host/base/kube_names.hpp"

namespace cosmicac::host {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool is_dns1123_label(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (char c : s)
    if (!lower_alnum(c) && c != '-') return false;
  return true;
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  // Dot-separated labels, each [a-z0-9]([-a-z0-9]*[a-z0-9])? (no length limit of its own).
  std::size_t start = 0;
  for (;;) {
    auto const dot = s.find('.', start);
    std::string_view const part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!is_dns1123_label(part, 253)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace cosmicac::host
