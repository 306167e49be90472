// A fresh directory under /tmp for one test, removed with its contents when
// the test ends (pass or fail). Header-only: shared by the module test
// executables, which link no common test library.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace cosmicac::test {

struct TempDir {
  std::filesystem::path path;

  explicit TempDir(std::string const& prefix = "cosmicac-test") {
    std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; /tmp is cleaned anyway
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;
};

}  // namespace cosmicac::test
