// The ENVS parser on arbitrary bytes: never crashes, and parse → encode →
// parse gives the same env.
#include "config/envs.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::config;
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto env = parse_envs(text);
  if (!env) return 0;
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
