#include "test_images.hpp"

#include "common/process.hpp"
#include "tests/unit/support/make_temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace cosmicac::disk::test {

TempDir::TempDir() { path_ = cosmicac::test::make_temp_dir("cosmicac-disk-test", "/var/tmp").string(); }

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string make_sparse(std::string const& path, std::uint64_t bytes) {
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  ::close(fd);
  return path;
}

std::string run_ok(std::string const& program, std::vector<std::string> const& args, std::string const& input) {
  INFO("tool needed by this test: " << program << " (packaging/install-deps installs it)");
  REQUIRE_FALSE(tool_path(program).empty());
  auto r = run_command({.program = program, .args = args, .input = input});
  REQUIRE(r);
  INFO(program << " stderr: " << r->err);
  REQUIRE(r->exit_code == 0);
  return r->out;
}

std::string content_hash(std::string const& path) {
  std::string out = run_ok("sha256sum", {path});
  return out.substr(0, out.find(' '));
}

LoopDevice::LoopDevice(std::string const& file, bool partscan) {
  std::vector<std::string> args{"-f", "--show"};
  if (partscan) args.push_back("-P");
  args.push_back(file);
  std::string out = run_ok("losetup", args);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  INFO("losetup printed: " << out);
  REQUIRE(out.rfind("/dev/loop", 0) == 0);
  path_ = out;
}

LoopDevice::~LoopDevice() {
  if (!path_.empty()) (void)run_command({.program = "losetup", .args = {"-d", path_}});
}

void write_at(std::string const& path, std::uint64_t offset, std::string const& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

}  // namespace cosmicac::disk::test
