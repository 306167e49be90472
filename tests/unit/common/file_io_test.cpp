#include "common/file_io.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace cosmicac;
using cosmicac::test::TempDir;

namespace {
std::string slurp(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t mode_of(fs::path const& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::size_t entries(fs::path const& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

struct Umask {
  mode_t old;
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
};
}  // namespace

TEST_CASE("write_file_atomically: exact content and exactly the requested mode, whatever the umask") {
  TempDir t{"file-io"};
  auto const path = (t.path / "f").string();
  {
    Umask u(0077);
    REQUIRE(write_file_atomically(path, "one", 0755));
    CHECK(slurp(path) == "one");
    CHECK(mode_of(path) == 0755);
  }
  {
    Umask u(0);
    REQUIRE(write_file_atomically(path, std::string("two\0bytes", 9), 0600));
    CHECK(slurp(path) == std::string("two\0bytes", 9));
    CHECK(mode_of(path) == 0600);
  }
  CHECK(entries(t.path) == 1);  // no temporary file left beside it
}

TEST_CASE("write_file_atomically replaces a symlink at the target, leaving what it pointed to untouched") {
  TempDir t{"file-io"};
  auto const victim = t.path / "victim";
  std::ofstream(victim) << "precious";
  fs::permissions(victim, static_cast<fs::perms>(0600));
  auto const path = t.path / "target";
  fs::create_symlink(victim, path);

  REQUIRE(write_file_atomically(path.string(), "new", 0755));
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  CHECK(slurp(path) == "new");
  CHECK(slurp(victim) == "precious");
  CHECK(mode_of(victim) == 0600);
}

TEST_CASE("write_file_atomically: a failure leaves no temporary file and names the path") {
  TempDir t{"file-io"};
  auto const path = t.path / "busy";
  fs::create_directories(path / "inside");  // rename(2) cannot replace a non-empty directory
  auto st = write_file_atomically(path.string(), "data", 0644, Reason::DiskError);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::DiskError);
  CHECK(st.error().message.find(path.string()) != std::string::npos);
  CHECK(entries(t.path) == 1);  // only the directory: the temporary file is gone

  auto missing_dir = write_file_atomically((t.path / "no/such/f").string(), "x", 0644);
  REQUIRE_FALSE(missing_dir);
  CHECK(missing_dir.error().message.find((t.path / "no/such/f").string()) != std::string::npos);
}

TEST_CASE("read_file: bounded, and with NoSymlinks a symlink is refused, not followed") {
  TempDir t{"file-io"};
  auto const f = t.path / "f";
  std::ofstream(f) << "0123456789";
  REQUIRE(read_file(f.string(), 10));
  CHECK(*read_file(f.string(), 10) == "0123456789");
  auto big = read_file(f.string(), 9);
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find(f.string()) != std::string::npos);

  auto const link = t.path / "link";
  fs::create_symlink(f, link);
  CHECK(read_file(link.string(), 100));
  CHECK_FALSE(read_file(link.string(), 100, Follow::NoSymlinks));
}

TEST_CASE("UniqueFd closes once; release hands the descriptor over") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  {
    UniqueFd a(p[0]);
    UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK(b.get() == p[0]);
  }
  CHECK(::fcntl(p[0], F_GETFD) == -1);  // closed by b
  UniqueFd c(p[1]);
  int const raw = c.release();
  CHECK_FALSE(c.valid());
  CHECK(::fcntl(raw, F_GETFD) != -1);
  ::close(raw);
}
