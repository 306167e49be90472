#include "common/registry_host.hpp"

#include <string>

namespace cosmicac {
namespace {
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
}  // namespace

bool valid_registry_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return false;
  std::string_view name = host;
  if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    std::string_view port = host.substr(colon + 1);
    name = host.substr(0, colon);
    if (port.empty() || port.size() > 5) return false;
    unsigned long p = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      p = p * 10 + static_cast<unsigned long>(c - '0');
    }
    if (p == 0 || p > 65535) return false;
  }
  if (name.empty()) return false;
  // Hostname labels (which also covers dotted IPv4 syntax): [A-Za-z0-9-], no
  // leading/trailing '-', 1..63 characters each.
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!is_alnum(c) && c != '-') return false;
    start = dot + 1;
  }
  // All-numeric names must be a real IPv4 address.
  bool numeric = true;
  for (char c : name)
    if (!(c == '.' || (c >= '0' && c <= '9'))) numeric = false;
  if (numeric) {
    int parts = 0;
    std::size_t s = 0;
    while (s <= name.size()) {
      std::size_t dot = name.find('.', s);
      if (dot == std::string_view::npos) dot = name.size();
      std::string_view octet = name.substr(s, dot - s);
      if (octet.size() > 3 || std::stoi(std::string(octet)) > 255) return false;
      ++parts;
      s = dot + 1;
    }
    if (parts != 4) return false;
  }
  return true;
}

}  // namespace cosmicac
