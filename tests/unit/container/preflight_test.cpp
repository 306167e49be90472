#include "container/preflight.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::container;
namespace fs = std::filesystem;

TEST_CASE("the bind source must be a mounted filesystem, not the bare directory") {
  test::TempDir t{"mnt-test"};
  fs::path const& dir = t.path;
  auto st = check_bind_source(dir.string());
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::ContainerError);
  CHECK(st.error().message.find(dir.string()) != std::string::npos);
  CHECK(check_bind_source("/proc"));  // a real mount point
  CHECK(check_bind_source("/"));
  CHECK_FALSE(check_bind_source("/no/such/dir"));
}

TEST_CASE("/dev/net/tun is created as char 10:200 mode 0666, and accepted when present") {
  test::TempDir t{"tun-test"};
  fs::path const& dev = t.path;
  ::umask(022);
  REQUIRE(ensure_tun(dev.string()));
  struct stat st {};
  REQUIRE(::stat((dev / "net/tun").c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(major(st.st_rdev) == 10);
  CHECK(minor(st.st_rdev) == 200);
  CHECK((st.st_mode & 0777) == 0666);
  CHECK(ensure_tun(dev.string()));  // idempotent
  fs::remove(dev / "net/tun");
  fs::create_directories(dev / "net/tun");  // something else in the way
  auto bad = ensure_tun(dev.string());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().reason == Reason::ContainerError);
}
