#include "agent/commands.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using cosmicac::agent::config_permission_warning;
using cosmicac::test::TempDir;

// The config file may hold keys in ENVS: a copy others can read leaks them.
TEST_CASE("config_permission_warning: any group/other bit warns, naming the file, its mode and chmod 600") {
  TempDir t{"agent-cfg"};
  auto const path = (t.path / "docker-bootstrap").string();
  std::ofstream(path) << "NAME=x\n";
  for (auto mode : {0644, 0640, 0604, 0620, 0602, 0610, 0666}) {
    fs::permissions(path, static_cast<fs::perms>(mode));
    auto const w = config_permission_warning(path);
    INFO("mode " << std::oct << mode);
    CHECK(w.find(path) != std::string::npos);
    CHECK(w.find("chmod 600 " + path) != std::string::npos);
  }
  fs::permissions(path, static_cast<fs::perms>(0644));
  CHECK(config_permission_warning(path).find("mode 0644") != std::string::npos);
  for (auto mode : {0600, 0400, 0700}) {
    fs::permissions(path, static_cast<fs::perms>(mode));
    CHECK(config_permission_warning(path).empty());
  }
  CHECK(config_permission_warning(path + ".absent").empty());  // no file: all defaults, nothing to say
}
