// The settings file parser on arbitrary bytes: never crashes; an error names
// at most the line and a valid key (no other text of the input); whatever it
// accepts re-encodes to a file that parses to the same entries.
#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "config/settings.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

// "fuzz line N: reason" or "fuzz line N: KEY: reason" with KEY a name (the
// parser's reasons hold no ": ").
void check_error_shape(std::string_view m) {
  constexpr std::string_view prefix = "fuzz line ";
  if (!m.starts_with(prefix)) std::abort();
  m.remove_prefix(prefix.size());
  std::size_t digits = 0;
  while (digits < m.size() && m[digits] >= '0' && m[digits] <= '9') ++digits;
  if (digits == 0 || !m.substr(digits).starts_with(": ")) std::abort();
  m.remove_prefix(digits + 2);
  std::size_t const sep = m.find(": ");
  if (sep != std::string_view::npos && !cosmicac::config::is_env_name(m.substr(0, sep))) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  (void)cosmicac::config::parse_settings(text, "fuzz");
  auto entries = cosmicac::config::parse_config_file(text, "fuzz");
  if (!entries) {
    check_error_shape(entries.error().message);
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto const& e : *entries) pairs.emplace_back(e.key, e.value);
  auto again = cosmicac::config::parse_config_file(cosmicac::config::encode_config_file(pairs, text), "fuzz");
  if (!again || again->size() != pairs.size()) std::abort();
  for (std::size_t k = 0; k < pairs.size(); ++k)
    if ((*again)[k].key != pairs[k].first || (*again)[k].value != pairs[k].second) std::abort();
  return 0;
}
