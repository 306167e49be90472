// The settings file parser on arbitrary bytes: never crashes; whatever it
// accepts re-encodes to a file that parses to the same entries.
#include "config/config_file.hpp"
#include "config/settings.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  (void)cosmicac::config::parse_settings(text, "fuzz");
  auto entries = cosmicac::config::parse_config_file(text, "fuzz");
  if (!entries) return 0;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto const& e : *entries) pairs.emplace_back(e.key, e.value);
  auto again = cosmicac::config::parse_config_file(cosmicac::config::encode_config_file(pairs, text), "fuzz");
  if (!again || again->size() != pairs.size()) std::abort();
  for (std::size_t k = 0; k < pairs.size(); ++k)
    if ((*again)[k].key != pairs[k].first || (*again)[k].value != pairs[k].second) std::abort();
  return 0;
}
