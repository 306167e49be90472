// The one checked mkdtemp of the unit tests: TempDir (temp_dir.hpp) and the
// helpers that keep their own directory type (the fake dockerd, which links no
// test framework; the disk and host tests' TempDir) all make theirs here.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace cosmicac::test {

// A fresh directory `parent`/`prefix`.XXXXXX; throws, naming the template and
// the errno, when mkdtemp fails (inside a test case that fails the test).
inline std::filesystem::path make_temp_dir(std::string const& prefix, std::string const& parent = "/tmp") {
  std::string tmpl = parent + "/" + prefix + ".XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  return tmpl;
}

}  // namespace cosmicac::test
