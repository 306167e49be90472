// The ENVS parser on arbitrary bytes: never crashes; an error names at most
// the entry's position and a valid key (no other text of the input); and
// parse → encode → parse gives the same env.
#include "config/envs.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

// "ENVS entry N: reason" or "ENVS entry N (KEY): reason" with KEY a name.
void check_error_shape(std::string_view m) {
  constexpr std::string_view prefix = "ENVS entry ";
  if (!m.starts_with(prefix)) std::abort();
  m.remove_prefix(prefix.size());
  std::size_t digits = 0;
  while (digits < m.size() && m[digits] >= '0' && m[digits] <= '9') ++digits;
  if (digits == 0) std::abort();
  m.remove_prefix(digits);
  if (m.starts_with(" (")) {
    std::size_t const close = m.find("): ");
    if (close == std::string_view::npos || !cosmicac::config::is_env_name(m.substr(2, close - 2))) std::abort();
  } else if (!m.starts_with(": ")) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::config;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto env = parse_envs(text);
  if (!env) {
    check_error_shape(env.error().message);
    return 0;
  }
  std::vector<std::pair<std::string, EnvValue>> vars;
  for (auto const& kv : *env) {
    auto const eq = kv.find('=');
    if (eq == std::string::npos) std::abort();
    vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  auto encoded = encode_envs(vars);
  if (!encoded) std::abort();
  auto again = parse_envs(*encoded);
  if (!again || *again != *env) std::abort();
  (void)envs_to_json_array(*env);
  return 0;
}
