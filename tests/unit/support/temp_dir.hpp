// A fresh directory under /tmp for one test, removed with its contents when
// the test ends (pass or fail). Header-only: shared by the module test
// executables, which link no common test library.
#pragma once

#include "tests/unit/support/make_temp_dir.hpp"

#include <filesystem>
#include <string>
#include <system_error>

namespace cosmicac::test {

struct TempDir {
  std::filesystem::path path;

  explicit TempDir(std::string const& prefix = "cosmicac-test") : path(make_temp_dir(prefix)) {}
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; /tmp is cleaned anyway
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;
};

}  // namespace cosmicac::test
