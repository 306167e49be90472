#include "container/sha256.hpp"

#include "common/process.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using cosmicac::container::sha256_hex;

TEST_CASE("sha256 FIPS 180-4 vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sha256 agrees with coreutils sha256sum at every padding boundary") {
  for (std::size_t len : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 1000u}) {
    std::string data(len, 'q');
    auto r = run_command(Command{.program = "sha256sum", .input = data});
    REQUIRE(r);
    REQUIRE(r->exit_code == 0);
    CHECK(sha256_hex(data) == r->out.substr(0, 64));
  }
}
