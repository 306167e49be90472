#include "registry/auth_header.hpp"

#include "common/process.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <optional>

using namespace cosmicac;
using namespace cosmicac::registry;

namespace {
// An independent strict RFC 4648 §5 decoder (padding required, alphabet only),
// standing in for Go's base64.URLEncoding that dockerd uses.
std::optional<std::string> strict_decode(std::string_view s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  if (s.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i + static_cast<std::size_t>(k)];
      if (c == '=') {
        if (i + 4 != s.size() || k < 2) return std::nullopt;
        v[k] = 0;
        ++pad;
      } else {
        if (pad) return std::nullopt;
        v[k] = val(c);
        if (v[k] < 0) return std::nullopt;
      }
    }
    unsigned n = static_cast<unsigned>(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 255);
    if (pad < 1) out += static_cast<char>(n & 255);
  }
  return out;
}
}  // namespace

TEST_CASE("base64url with padding, RFC 4648 vectors") {
  CHECK(base64url_encode("") == "");
  CHECK(base64url_encode("f") == "Zg==");
  CHECK(base64url_encode("fo") == "Zm8=");
  CHECK(base64url_encode("foo") == "Zm9v");
  CHECK(base64url_encode("foob") == "Zm9vYg==");
  CHECK(base64url_encode("\xfb\xff\xfe") == "-__-");  // url alphabet, not + and /
}

TEST_CASE("X-Registry-Auth decodes strictly (and with coreutils basenc) to the credentials") {
  Credentials c{.registry = "ghcr.io", .username = "us\"er", .token = Secret("t?k>en~with/odd+chars\\")};
  std::string const header = registry_auth_header(c);
  REQUIRE(header.rfind("X-Registry-Auth: ", 0) == 0);
  std::string const value = header.substr(17);
  auto decoded = strict_decode(value);
  REQUIRE(decoded);
  auto j = nlohmann::json::parse(*decoded);
  CHECK(j.at("username") == "us\"er");
  CHECK(j.at("password") == "t?k>en~with/odd+chars\\");
  CHECK(j.at("serveraddress") == "ghcr.io");
  // A second, real strict decoder. (The value goes through stdin, never argv.)
  auto r = run_command(Command{.program = "basenc", .args = {"--base64url", "-d"}, .input = value});
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out == *decoded);
}

TEST_CASE("every length of token decodes (padding is right for 0, 1 and 2 leftover bytes)") {
  for (int len = 1; len <= 7; ++len) {
    Credentials c{.registry = "r.io",
                  .username = "u",
                  .token = Secret(std::string(static_cast<std::size_t>(len), 'k'))};
    auto d = strict_decode(registry_auth_header(c).substr(17));
    REQUIRE(d);
    CHECK(nlohmann::json::parse(*d).at("password") == std::string(static_cast<std::size_t>(len), 'k'));
  }
}
