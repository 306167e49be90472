// Property: encode_envs then parse_envs gives back exactly the variables.
#include "config/envs.hpp"
#include "proptest_seed.hpp"

#include <catch2/catch_test_macros.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

using namespace cosmicac::config;
using nlohmann::json;

namespace {

// Pieces chosen to hit every rule: separators, quotes, brackets, escapes,
// whitespace at the edges, multi-byte UTF-8.
std::vector<std::string> const kPieces = {"a",
                                          "Z",
                                          "0",
                                          "9",
                                          " ",
                                          "\t",
                                          "\n",
                                          "\r",
                                          ";",
                                          "=",
                                          "{",
                                          "}",
                                          "[",
                                          "]",
                                          "\"",
                                          "'",
                                          "\\",
                                          ":",
                                          ",",
                                          "$",
                                          "`",
                                          "#",
                                          "-",
                                          ".",
                                          "/",
                                          "\\\"",
                                          "\\\\",
                                          "\xC3\xA9",
                                          "\xE2\x82\xAC",
                                          "\xF0\x9F\x98\x80",
                                          "\x01",
                                          "\x7F",
                                          "true",
                                          "1.50",
                                          "{a:1}",
                                          "\"q\""};

struct Gen {
  std::mt19937_64 rng;
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

  std::string text(std::size_t max_pieces) {
    std::string s;
    for (std::size_t k = pick(max_pieces + 1); k > 0; --k) s += kPieces[pick(kPieces.size())];
    return s;
  }
  std::string name() {
    static constexpr std::string_view first = "ABCXYZabcxyz_";
    static constexpr std::string_view rest = "ABCXYZabcxyz_0123456789";
    std::string n(1, first[pick(first.size())]);
    for (std::size_t k = pick(6); k > 0; --k) n += rest[pick(rest.size())];
    return n;
  }
  json value(int depth) {
    switch (pick(depth > 3 ? 6 : 8)) {
      case 0: return text(6);
      case 1: return static_cast<std::int64_t>(rng());
      case 2: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
      case 3: return pick(2) == 0;
      case 4: return nullptr;
      case 5: return static_cast<double>(pick(1000)) / 8.0;
      case 6: {
        json a = json::array();
        for (std::size_t k = pick(4); k > 0; --k) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (std::size_t k = pick(4); k > 0; --k) o[text(3)] = value(depth + 1);
        return o;
      }
    }
  }
};

}  // namespace

TEST_CASE("ENVS round trip: 10,000 random variable lists") {
  auto const seed = proptest_seed();
  Gen g{std::mt19937_64(seed)};
  for (int iter = 0; iter < 10000; ++iter) {
    std::vector<std::pair<std::string, EnvValue>> vars;
    std::vector<std::string> expected;
    std::set<std::string> names;  // a name given twice is an error, not a round trip
    for (std::size_t k = g.pick(7); k > 0; --k) {
      std::string key = g.name();
      if (!names.insert(key).second) continue;
      if (g.pick(3) == 0) {
        json j = g.pick(4) == 0 ? g.value(0) : (g.pick(2) == 0 ? g.value(3) : json::object({{g.text(3), g.value(1)}}));
        if (g.pick(2) == 0) j = json::array({j, g.value(2)});
        expected.push_back(key + "=" + j.dump());
        vars.emplace_back(key, std::move(j));
      } else {
        std::string v = g.text(12);
        expected.push_back(key + "=" + v);
        vars.emplace_back(key, std::move(v));
      }
    }
    auto encoded = encode_envs(vars);
    INFO("seed " << seed << " iteration " << iter);
    REQUIRE(encoded);
    INFO("encoded: " << *encoded);
    auto parsed = parse_envs(*encoded);
    if (!parsed) FAIL("parse failed: " << parsed.error());
    REQUIRE(*parsed == expected);
  }
}

TEST_CASE("ENVS: whatever parses re-encodes to the same env") {
  auto const seed = proptest_seed();
  Gen g{std::mt19937_64(seed + 1)};
  int parsed_ok = 0;
  for (int iter = 0; iter < 10000; ++iter) {
    std::string text;
    for (std::size_t k = g.pick(4); k > 0; --k) text += g.name() + "=" + g.text(10) + (g.pick(2) ? ";" : " ; ");
    auto first = parse_envs(text);
    if (!first) continue;
    ++parsed_ok;
    std::vector<std::pair<std::string, EnvValue>> vars;
    for (auto const& kv : *first) {
      auto const eq = kv.find('=');
      vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    auto again = parse_envs(encode_envs(vars).value());
    INFO("seed " << seed + 1 << " iteration " << iter << " input: " << text);
    REQUIRE(again);
    REQUIRE(*again == *first);
  }
  CHECK(parsed_ok > 1000);  // the generator must exercise the success path
}
