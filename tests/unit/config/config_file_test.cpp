#include "config/config_file.hpp"

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::config;

namespace {
struct KV {
  std::string key, value;
  int line;
  bool operator==(KV const&) const = default;
};
std::ostream& operator<<(std::ostream& os, KV const& kv) { return os << kv.key << "=[" << kv.value << "]@" << kv.line; }
std::vector<KV> read(std::string_view text) {
  auto r = parse_config_file(text, "cfg");
  INFO("text: " << text);
  if (!r) FAIL("unexpected error: " << r.error());
  std::vector<KV> out;
  for (auto& e : *r) out.push_back({e.key, e.value, e.line});
  return out;
}
std::string error_of(std::string_view text) {
  auto r = parse_config_file(text, "cfg");
  INFO("text: " << text);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  return r.error().message;
}
}  // namespace

TEST_CASE("config file: comments, blanks, export, quoting styles") {
  std::string const text =
      "# header\n"
      "\n"
      "MNT=/data\n"
      "  export IMG=ghcr.io/x/y:1   # trailing comment\n"
      "NAME='single $not `expanded` \\n'\n"
      "ENVS=\"A=1;CFG={a:\\\"x;y\\\"};P=\\$HOME \\`q\\` back\\\\slash nl\\n other\\q\"\n"
      "JOB_TYPE=a'b c'\"d\"\\ e\r\n"
      "EMPTY=\n"
      "HASH=a#b\n";
  CHECK(read(text) == std::vector<KV>{
                          {"MNT", "/data", 3},
                          {"IMG", "ghcr.io/x/y:1", 4},
                          {"NAME", "single $not `expanded` \\n", 5},
                          {"ENVS", "A=1;CFG={a:\"x;y\"};P=$HOME `q` back\\slash nl\n other\\q", 6},
                          {"JOB_TYPE", "ab cd e", 7},
                          {"EMPTY", "", 8},
                          {"HASH", "a#b", 9},
                      });
}

TEST_CASE("config file: multi-line quoted values keep their start line") {
  CHECK(read("A='x\ny'\nB=\"p\nq\"\nC=1\n") == std::vector<KV>{{"A", "x\ny", 1}, {"B", "p\nq", 3}, {"C", "1", 5}});
  CHECK(read("A=\"one \\\ntwo\"\nB=x\\\ny\nC=z") ==
        std::vector<KV>{{"A", "one two", 1}, {"B", "xy", 3}, {"C", "z", 5}});
}

TEST_CASE("config file: what the shell would execute or expand is an error naming key and line") {
  CHECK(error_of("A=1\nMSG=hello world\n") == "cfg line 2: MSG: unquoted whitespace in the value (quote the value)");
  CHECK(error_of("\n\nX=$(touch /tmp/p)") ==
        "cfg line 3: X: shell expansion ($ or `) is not supported (use single quotes or escape it)");
  CHECK(error_of("X=\"a `id`\"") ==
        "cfg line 1: X: shell expansion ($ or `) is not supported (use single quotes or escape it)");
  CHECK(error_of("X=a;rm") == "cfg line 1: X: unquoted shell operator in the value (quote the value)");
  CHECK(error_of("X=a|b") == "cfg line 1: X: unquoted shell operator in the value (quote the value)");
}

TEST_CASE("config file: malformed lines name key and line, never the value") {
  CHECK(error_of("A=1\n\nB='secret\n") == "cfg line 3: B: unterminated single quote");
  CHECK(error_of("B=\"secret") == "cfg line 1: B: unterminated double quote");
  CHECK(error_of("A=1\nB = 2") == "cfg line 2: expected KEY=VALUE with '=' right after the key (no spaces around '=')");
  // A word without '=' is no key: it may be the rest of an unquoted multi-line secret.
  CHECK(error_of("PASSWORD=first\nhalfOfTheSecret\n") ==
        "cfg line 2: expected KEY=VALUE with '=' right after the key (no spaces around '=')");
  CHECK(error_of("1A=x") == "cfg line 1: expected KEY=VALUE");
  CHECK(error_of("A=x\\") == "cfg line 1: A: backslash at the end of the file");
  CHECK(error_of(std::string("A=\0", 3)) == "cfg line 1: contains a NUL byte");
  CHECK(error_of(std::string("A=1\nB=2\n#\0", 10)) == "cfg line 3: contains a NUL byte");
}

TEST_CASE("config file: encoder chooses bare, single or double quotes") {
  CHECK(encode_config_file({{"A", "ghcr.io/x:1"}, {"B", ""}, {"C", "two words"}, {"D", "it's $x\n"}},
                           "Generated\n\nby test") ==
        "# Generated\n#\n# by test\n"
        "A=ghcr.io/x:1\n"
        "B=''\n"
        "C='two words'\n"
        "D=\"it's \\$x\\n\"\n");
}
