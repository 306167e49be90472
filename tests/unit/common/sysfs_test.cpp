#include "common/sysfs.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using cosmicac::kMaxSysfsAttributeBytes;
using cosmicac::read_sysfs_attribute;
using cosmicac::test::TempDir;
namespace fs = std::filesystem;

namespace {
void write_text(fs::path const& p, std::string const& text) { std::ofstream(p, std::ios::binary) << text; }
}  // namespace

TEST_CASE("read_sysfs_attribute: whole and as written, through the links on the way, never a link itself") {
  TempDir t;
  fs::create_directories(t.path / "devices/pci0000:00/0000:18:00.0");
  write_text(t.path / "devices/pci0000:00/0000:18:00.0/vendor", "0x10de\n");
  fs::create_directories(t.path / "bus/pci/devices");
  fs::create_directory_symlink(t.path / "devices/pci0000:00/0000:18:00.0", t.path / "bus/pci/devices/0000:18:00.0");
  CHECK(read_sysfs_attribute((t.path / "bus/pci/devices/0000:18:00.0/vendor").string()) == "0x10de\n");

  write_text(t.path / "vpd", std::string("\0\x80\0\x02"
                                         "AB",
                                         6));  // binary: NUL bytes kept
  CHECK(read_sysfs_attribute((t.path / "vpd").string()) == std::string("\0\x80\0\x02"
                                                                       "AB",
                                                                       6));
  write_text(t.path / "empty", "");
  CHECK(read_sysfs_attribute((t.path / "empty").string()) == "");

  fs::create_symlink(t.path / "devices/pci0000:00/0000:18:00.0/vendor", t.path / "linked");
  CHECK_FALSE(read_sysfs_attribute((t.path / "linked").string()));
  CHECK_FALSE(read_sysfs_attribute((t.path / "absent").string()));
  CHECK_FALSE(read_sysfs_attribute(t.path.string()));  // a directory is no attribute
}

TEST_CASE("read_sysfs_attribute: larger than an attribute can be is not one") {
  TempDir t;
  write_text(t.path / "limit", std::string(kMaxSysfsAttributeBytes, 'x'));
  write_text(t.path / "over", std::string(kMaxSysfsAttributeBytes + 1, 'x'));
  CHECK(read_sysfs_attribute((t.path / "limit").string()).value_or("").size() == kMaxSysfsAttributeBytes);
  CHECK_FALSE(read_sysfs_attribute((t.path / "over").string()));
}
