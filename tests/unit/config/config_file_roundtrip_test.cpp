// Property: parse_config_file(encode_config_file(e)) == e for any bytes but NUL.
#include "config/config_file.hpp"
#include "proptest_seed.hpp"

#include <catch2/catch_test_macros.hpp>

#include <random>

using namespace cosmicac::config;

TEST_CASE("config file round trip: 10,000 random files of arbitrary bytes") {
  auto const seed = proptest_seed();
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::string_view const special = "'\"\\$`#;&|<>() \t\r\n=";
  for (int iter = 0; iter < 10000; ++iter) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (std::size_t k = pick(6); k > 0; --k) {
      std::string key(1, "ABZ_ab"[pick(6)]);
      for (std::size_t j = pick(5); j > 0; --j) key += "AZ_09az"[pick(7)];
      std::string value;
      for (std::size_t j = pick(20); j > 0; --j)
        value += pick(2) == 0 ? special[pick(special.size())] : static_cast<char>(1 + pick(255));
      entries.emplace_back(std::move(key), std::move(value));
    }
    std::string header;
    for (std::size_t j = pick(10); j > 0; --j) header += static_cast<char>(1 + pick(255));
    std::string const text = encode_config_file(entries, header);
    INFO("seed " << seed << " iteration " << iter);
    auto parsed = parse_config_file(text, "roundtrip");
    if (!parsed) FAIL("parse failed: " << parsed.error());
    REQUIRE(parsed->size() == entries.size());
    int last_line = 0;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      CHECK((*parsed)[k].key == entries[k].first);
      CHECK((*parsed)[k].value == entries[k].second);
      CHECK((*parsed)[k].line > last_line);
      last_line = (*parsed)[k].line;
    }
  }
}
