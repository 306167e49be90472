#include "disk/fstab.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
using namespace std::chrono_literals;

namespace {

std::string slurp(std::string const& p) {
  std::string out;
  FILE* f = std::fopen(p.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

void spit(std::string const& p, std::string const& s) {
  FILE* f = std::fopen(p.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

std::size_t count(std::string const& hay, std::string const& needle) {
  std::size_t n = 0;
  for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
  return n;
}

ino_t inode(std::string const& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_ino;
}

constexpr const char* kExisting =
    "# /etc/fstab: static file system information.\n"
    "#\n"
    "# root\n"
    "UUID=1111-root / ext4 errors=remount-ro 0 1\n"
    "# the data disk (added by docker-bootstrap.sh)\n"
    "UUID=2222-old /data ext4 defaults,nofail 0 2\n"
    "/dev/sr0 /media/cdrom0 udf,iso9660 user,noauto 0 0\n"
    "# trailing comment\n";

}  // namespace

TEST_CASE("data_fstab_entry: UUID, nofail and the systemd device timeout") {
  auto e = data_fstab_entry("abcd", "/data", "ext4", 45s);
  CHECK(e.source == "UUID=abcd");
  CHECK(e.options == "nosuid,nodev,nofail,x-systemd.device-timeout=45s");
  CHECK(e.freq == 0);
  CHECK(e.passno == 2);
}

TEST_CASE("ensure_fstab_entry replaces our earlier line for the mount point in place, keeps the rest") {
  TempDir dir;
  std::string const path = dir / "fstab";
  spit(path, kExisting);
  ::chmod(path.c_str(), 0640);
  ino_t const before = inode(path);

  auto r = ensure_fstab_entry(path, data_fstab_entry("3333-new", "/data", "ext4", 30s));
  REQUIRE(r);
  CHECK(*r);
  std::string const text = slurp(path);
  INFO(text);
  CHECK(text.find("2222-old") == std::string::npos);
  CHECK(count(text, " /data ") == 1);
  CHECK(text.find("UUID=3333-new /data ext4 nosuid,nodev,nofail,x-systemd.device-timeout=30s 0 2") !=
        std::string::npos);
  // Other lines and every comment survive, in order, the comment above the old line now above the new one.
  for (auto const* keep :
       {"# /etc/fstab: static file system information.", "# root", "UUID=1111-root / ext4 errors=remount-ro 0 1",
        "# trailing comment", "# the data disk (added by docker-bootstrap.sh)"})
    CHECK(text.find(keep) != std::string::npos);
  CHECK(text.find("/dev/sr0 /media/cdrom0 udf,iso9660 user,noauto 0 0") != std::string::npos);
  CHECK(text.find("# the data disk") < text.find("UUID=3333-new"));
  CHECK(text.find("UUID=3333-new") < text.find("/dev/sr0"));
  // Replaced by rename (atomic), mode kept, no temporary file left behind.
  CHECK(inode(path) != before);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  int files = 0;
  for (auto const& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
}

TEST_CASE("ensure_fstab_entry is idempotent: the same line again changes nothing") {
  TempDir dir;
  std::string const path = dir / "fstab";
  spit(path, kExisting);
  auto entry = data_fstab_entry("3333-new", "/data", "ext4", 30s);
  REQUIRE(ensure_fstab_entry(path, entry));
  std::string const once = slurp(path);
  ino_t const ino = inode(path);
  auto again = ensure_fstab_entry(path, entry);
  REQUIRE(again);
  CHECK_FALSE(*again);
  CHECK(slurp(path) == once);
  CHECK(inode(path) == ino);
}

TEST_CASE("ensure_fstab_entry replaces a line for the same UUID at another mount point") {
  TempDir dir;
  std::string const path = dir / "fstab";
  spit(path, "UUID=3333-new /old-data ext4 defaults 0 2\n/dev/vda1 / ext4 defaults 0 1\n");
  REQUIRE(ensure_fstab_entry(path, data_fstab_entry("3333-new", "/data", "ext4", 30s)));
  std::string const text = slurp(path);
  CHECK(text.find("/old-data") == std::string::npos);
  CHECK(count(text, "UUID=3333-new") == 1);
  CHECK(text.find("/dev/vda1 / ext4 defaults 0 1") != std::string::npos);
}

TEST_CASE("ensure_fstab_entry creates a missing fstab") {
  TempDir dir;
  std::string const path = dir / "fstab";
  auto r = ensure_fstab_entry(path, data_fstab_entry("abcd", "/srv/data dir", "xfs", 30s));
  REQUIRE(r);
  CHECK(*r);
  // libmount escapes the space in the mount point.
  CHECK(slurp(path) == "UUID=abcd /srv/data\\040dir xfs nosuid,nodev,nofail,x-systemd.device-timeout=30s 0 2\n");
}

TEST_CASE("ensure_fstab_entry refuses to rewrite an fstab it cannot parse, naming the line") {
  TempDir dir;
  std::string const path = dir / "fstab";
  std::string const text = "/dev/vda1 / ext4 defaults 0 1\nthis-line-is-broken\n";
  spit(path, text);
  auto r = ensure_fstab_entry(path, data_fstab_entry("abcd", "/data", "ext4", 30s));
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::DiskError);
  CHECK(r.error().message.find(path) != std::string::npos);
  CHECK(r.error().message.find("line 2") != std::string::npos);
  CHECK(slurp(path) == text);
}

// The lines the previous version wrote (no nosuid,nodev) become this
// version's on the next run, once; then nothing changes.
TEST_CASE("ensure_fstab_entry upgrades the previous version's lines to nosuid,nodev, idempotently") {
  TempDir dir;
  std::string const path = dir / "fstab";
  spit(path,
       "UUID=1111-root / ext4 errors=remount-ro 0 1\n"
       "UUID=3333 /var/lib/cosmicac/data ext4 defaults,nofail,x-systemd.device-timeout=30s 0 2\n"
       "/var/lib/cosmicac/data/mnt /data none bind,nofail,x-systemd.requires-mounts-for=/var/lib/cosmicac/data 0 0\n");
  auto data = data_fstab_entry("3333", "/var/lib/cosmicac/data", "ext4", 30s);
  FstabEntry const bind{.source = "/var/lib/cosmicac/data/mnt",
                        .target = "/data",
                        .fstype = "none",
                        .options = "bind,nosuid,nodev,nofail,x-systemd.requires-mounts-for=/var/lib/cosmicac/data",
                        .freq = 0,
                        .passno = 0};
  auto changed = ensure_fstab_entry(path, data);
  REQUIRE(changed);
  CHECK(*changed);
  changed = ensure_fstab_entry(path, bind);
  REQUIRE(changed);
  CHECK(*changed);
  std::string const text = slurp(path);
  INFO(text);
  CHECK(text ==
        "UUID=1111-root / ext4 errors=remount-ro 0 1\n"
        "UUID=3333 /var/lib/cosmicac/data ext4 nosuid,nodev,nofail,x-systemd.device-timeout=30s 0 2\n"
        "/var/lib/cosmicac/data/mnt /data none "
        "bind,nosuid,nodev,nofail,x-systemd.requires-mounts-for=/var/lib/cosmicac/data 0 0\n");
  for (auto const& e : {data, bind}) {
    auto again = ensure_fstab_entry(path, e);
    REQUIRE(again);
    CHECK_FALSE(*again);
  }
  CHECK(slurp(path) == text);
}

TEST_CASE("fstab_has_line: a line mounting that source at that target, whatever its options") {
  TempDir dir;
  std::string const path = dir / "fstab";
  auto none = fstab_has_line(path, "UUID=3333", "/var/lib/cosmicac/data");
  REQUIRE(none);
  CHECK_FALSE(*none);  // no file
  spit(path, kExisting);
  CHECK(*fstab_has_line(path, "UUID=2222-old", "/data"));
  CHECK_FALSE(*fstab_has_line(path, "UUID=2222-old", "/var/lib/cosmicac/data"));
  CHECK_FALSE(*fstab_has_line(path, "UUID=3333", "/data"));
  spit(path, "this-line-is-broken\n");
  auto bad = fstab_has_line(path, "UUID=3333", "/data");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("line 1") != std::string::npos);
}
