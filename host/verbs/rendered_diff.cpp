#include "host/verbs/rendered_diff.hpp"

#include "host/base/quantity.hpp"

namespace cosmicac::host {
namespace {

bool same_scalar(Json const& want, Json const& live) {
  if (want == live) return true;
  if (want.is_number() && live.is_number()) return want.get<double>() == live.get<double>();
  if (want.is_string() && live.is_string()) {
    // resource.Quantity is stored canonical: "1024Mi" comes back as "1Gi".
    auto a = parse_quantity(want.get<std::string>());
    auto b = parse_quantity(live.get<std::string>());
    return a && b && *a == *b;
  }
  return false;
}

}  // namespace

std::vector<std::string> rendered_differences(Json const& rendered, Json const& live, std::string const& at) {
  std::vector<std::string> out;
  if (rendered.is_object()) {
    if (!live.is_object()) return {at};
    for (auto it = rendered.begin(); it != rendered.end(); ++it) {
      std::string child = at.empty() ? it.key() : at + "." + it.key();
      if (!live.contains(it.key())) {
        out.push_back(child);
        continue;
      }
      auto sub = rendered_differences(it.value(), live[it.key()], child);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (rendered.is_array()) {
    if (!live.is_array() || live.size() != rendered.size()) return {at};
    for (std::size_t i = 0; i < rendered.size(); ++i) {
      auto sub = rendered_differences(rendered[i], live[i], at + "[" + std::to_string(i) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (!same_scalar(rendered, live)) out.push_back(at);
  return out;
}

}  // namespace cosmicac::host
