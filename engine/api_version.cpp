#include "engine/api_version.hpp"

#include <algorithm>
#include <vector>

namespace cosmicac::engine {
namespace {

// Dotted decimal components, leading zeros dropped, compared as digit strings:
// the daemon sends the version, so a component may be longer than any integer.
std::vector<std::string_view> parse_version(std::string_view v) {
  std::vector<std::string_view> parts;
  std::size_t const end = v.find_first_not_of("0123456789.");
  v = v.substr(0, end);
  if (v.empty()) return parts;
  while (true) {
    auto const dot = v.find('.');
    auto part = v.substr(0, dot);
    part.remove_prefix(std::min(part.find_first_not_of('0'), part.size()));
    parts.push_back(part);
    if (dot == std::string_view::npos) break;
    v.remove_prefix(dot + 1);
  }
  return parts;
}

int compare_component(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int const c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

int compare_api_versions(std::string_view a, std::string_view b) {
  auto const pa = parse_version(a), pb = parse_version(b);
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    // A missing component is 0, which is the empty digit string here.
    int const c =
        compare_component(i < pa.size() ? pa[i] : std::string_view{}, i < pb.size() ? pb[i] : std::string_view{});
    if (c != 0) return c;
  }
  return 0;
}

std::string negotiate_api_version(std::string_view server_api, std::string_view server_min, std::string_view ours) {
  std::string v(ours);
  if (!server_api.empty() && compare_api_versions(server_api, v) < 0) v = server_api;
  if (!server_min.empty() && compare_api_versions(v, server_min) < 0) v = server_min;
  return v;
}

}  // namespace cosmicac::engine
