// Property: an error of the ENVS, JS-literal or config-file parser carries no
// text of the input except a key that is a valid name (a mangled entry's
// "key" is often a piece of a secret value). Inputs hold a distinctive
// marker in values and in invalid keys; the marker's characters are chosen
// so that no valid name followed by '=' can contain any 3 consecutive
// characters of it.
#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "config/settings.hpp"
#include "proptest_seed.hpp"

#include <catch2/catch_test_macros.hpp>

#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::config;

namespace {

std::string fmt_hex(unsigned char u) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[u >> 4U] + kHex[u & 0xFU];
}

constexpr std::string_view kMarker = "Zq7@vW9%kJ";

// Any 3 consecutive characters of the marker in `message`: a leak.
bool leaks_marker(std::string_view message) {
  for (std::size_t k = 0; k + 3 <= kMarker.size(); ++k)
    if (message.find(kMarker.substr(k, 3)) != std::string_view::npos) return true;
  return false;
}

// A key named in a message must be a valid name written as a key (followed by '=') in the input.
bool is_key_of(std::string const& key, std::string_view input) {
  if (!is_env_name(key)) return false;
  for (std::size_t at = input.find(key + "="); at != std::string_view::npos; at = input.find(key + "=", at + 1)) {
    char const before = at == 0 ? ';' : input[at - 1];
    bool const name_char = (before >= 'A' && before <= 'Z') || (before >= 'a' && before <= 'z') ||
                           (before >= '0' && before <= '9') || before == '_';
    if (!name_char) return true;
  }
  return false;
}

// The input for a failure report, non-printable bytes as \xNN (Catch's
// wrapper chokes on some raw bytes).
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto const u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) out += c;
    else out += fmt_hex(u);
  }
  return out;
}

// The regex built once: built per call, it was most of this file's 40 CPU seconds under ASan.
std::string digits_as_n(std::string const& s) {
  static std::regex const entry_number("entry [0-9]+");
  return std::regex_replace(s, entry_number, "entry N");
}

// Every reason parse_envs can give, the entry number as N.
std::set<std::string> const kEnvsReasons = {
    "expected KEY=VALUE, found no '='",
    "invalid variable name (must match [A-Za-z_][A-Za-z0-9_]*)",
    "duplicate key, first set in entry N",
    "unexpected text after the literal (missing ';'?)",
    "unterminated quote",
    "text after the closing quote (quote the whole value)",
    "value contains a NUL byte",
    "value is not valid UTF-8",
};
std::set<std::string> const kLiteralReasons = {
    "unterminated literal",
    "nesting too deep",
    "expected a value",
    "unterminated object",
    "expected a key",
    "duplicate key",
    "expected ':' after a key",
    "expected ',' or '}'",
    "unterminated array",
    "expected ',' or ']'",
    "truncated \\u escape",
    "bad \\u escape",
    "unterminated string",
    "lone low surrogate",
    "lone high surrogate",
    "invalid escape in string",
    "string is not valid UTF-8",
};

std::vector<std::string> const kEnvsPieces = {
    std::string(kMarker),
    std::string(kMarker),
    "A",
    "B",
    "_x",
    "9",
    "=",
    "=",
    ";",
    ";",
    " ",
    "\n",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"",
    "'",
    "\\",
    "\\u12",
    "\\ud800",
    "@",
    "-",
    "{a:",
    "[1,",
    "'" + std::string(kMarker),
    "{" + std::string(kMarker) + ":1," + std::string(kMarker) + ":2}",
    "{k:1,k:2}",
    "A=1;A=2",
    "\xFF",
    "\xC3",
    std::string(1, '\0'),
    std::string(70, '['),
    "postgres://app:pw;",
    "Secret@db/x?sslmode=require",
};

std::vector<std::string> const kConfigPieces = {
    std::string(kMarker),
    std::string(kMarker),
    "A",
    "ENVS",
    "IMG",
    "MNT",
    "NAME",
    "=",
    "=",
    "\n",
    "\n",
    " ",
    "'",
    "\"",
    "\\",
    "$",
    "`",
    ";",
    "|",
    "#",
    "export ",
    "1",
    "/x",
    "{a:",
    std::string(1, '\0'),
    "\xFF",
};

std::string random_text(std::mt19937_64& rng, std::vector<std::string> const& pieces, std::size_t max) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::string s;
  for (std::size_t k = 1 + pick(max); k > 0; --k) s += pieces[pick(pieces.size())];
  return s;
}

}  // namespace

TEST_CASE("error text: a connection string with a ; in its password names entry 2 and nothing of the value") {
  auto r = parse_envs("DB_URL=postgres://app:pw;Secret@db/x?sslmode=require");
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  CHECK(r.error().message == "ENVS entry 2: invalid variable name (must match [A-Za-z_][A-Za-z0-9_]*)");
  // The same through the settings file, as the journal and STATUS= see it.
  auto s = parse_settings("ENVS='DB_URL=postgres://app:pw;Secret@db/x?sslmode=require'\n", "cfg");
  REQUIRE_FALSE(s);
  CHECK(s.error().message ==
        "cfg line 1: ENVS: ENVS entry 2: invalid variable name (must match [A-Za-z_][A-Za-z0-9_]*)");
}

TEST_CASE("error text: random ENVS errors hold only position, a valid key and a fixed reason") {
  auto const seed = proptest_seed();
  std::mt19937_64 rng(seed + 7);
  std::regex const shape(R"(ENVS entry ([0-9]+)(?: \(([^)]*)\))?: (.*))");
  std::regex const literal_shape(R"((.*) at offset [0-9]+ of the literal)");
  int errors = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string const text = random_text(rng, kEnvsPieces, 12);
    auto r = parse_envs(text);
    if (r) continue;
    ++errors;
    std::string const& m = r.error().message;
    INFO("seed " << seed + 7 << " iteration " << iter << "\ninput: " << printable(text) << "\nmessage: " << m);
    CHECK_FALSE(leaks_marker(m));
    std::smatch g;
    REQUIRE(std::regex_match(m, g, shape));
    if (g[2].matched) CHECK(is_key_of(g[2].str(), text));
    std::string const reason = g[3].str();
    std::smatch lit;
    if (std::regex_match(reason, lit, literal_shape)) {
      CHECK(g[2].matched);  // a literal has a key before it
      CHECK(kLiteralReasons.count(lit[1].str()) == 1);
    } else {
      CHECK(kEnvsReasons.count(digits_as_n(reason)) == 1);
    }
  }
  CHECK(errors > 5000);  // the generator must mostly reach error paths
}

TEST_CASE("error text: random config-file and settings errors hold no value text") {
  auto const seed = proptest_seed();
  std::mt19937_64 rng(seed + 8);
  std::regex const shape(R"(cfg line ([0-9]+)(?:: ([A-Za-z_][A-Za-z0-9_]*))?: (.*))");
  int errors = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string const text = random_text(rng, kConfigPieces, 16);
    auto r = parse_config_file(text, "cfg");
    auto s = parse_settings(text, "cfg");
    INFO("seed " << seed + 8 << " iteration " << iter << "\ninput: " << printable(text));
    for (auto const* e : {r ? nullptr : &r.error(), s ? nullptr : &s.error()}) {
      if (e == nullptr) continue;
      ++errors;
      INFO("message: " << e->message);
      CHECK_FALSE(leaks_marker(e->message));
      std::smatch g;
      REQUIRE(std::regex_match(e->message, g, shape));
      if (g[2].matched) CHECK(is_key_of(g[2].str(), text));
    }
    if (s)
      for (auto const& w : s->warnings) {
        INFO("warning: " << w);
        CHECK_FALSE(leaks_marker(w));
      }
  }
  CHECK(errors > 5000);
}
