#include "registry/cred_iso.hpp"

#include "common/process.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace cosmicac;
using namespace cosmicac::registry;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {
void write(fs::path const& p, std::string const& s) { std::ofstream(p, std::ios::binary) << s; }

std::string unique_label(const char* prefix) { return std::string(prefix) + std::to_string(::getpid() % 100000); }

void run_ok(std::string const& program, std::vector<std::string> args) {
  auto r = run_command(Command{.program = program, .args = std::move(args)});
  REQUIRE(r);
  INFO(program << ": " << r->err);
  REQUIRE(r->exit_code == 0);
}

// A read-only loop device over an image file; detached on destruction.
struct Loop {
  std::string dev;
  explicit Loop(fs::path const& image) {
    auto r = run_command(Command{.program = "losetup", .args = {"-f", "--show", "-r", image.string()}});
    REQUIRE(r);
    INFO("these tests need loop devices (losetup -f): " << r->err);
    REQUIRE(r->exit_code == 0);
    dev = r->out.substr(0, r->out.find('\n'));
  }
  ~Loop() { (void)run_command(Command{.program = "losetup", .args = {"-d", dev}}); }
};

void key_files(fs::path const& dir, std::string const& registry = "ghcr.io\n") {
  fs::create_directories(dir / "..2024_01_01");
  fs::create_directory(dir / "..data");
  write(dir / "DOCKER_REGISTRY", registry);
  write(dir / "DOCKER_USERNAME", "user\n");
  write(dir / "DOCKER_TOKEN", "tok-abc\n");
}

bool mounted_under(std::string const& root) {
  std::ifstream in("/proc/self/mountinfo");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  return all.find(root) != std::string::npos;
}
}  // namespace

TEST_CASE("candidate order: the label first, then other iso9660 devices, by name") {
  CredIsoOptions o;
  o.label = "cfgdata";
  auto out = order_candidates({{"/dev/sr2", "iso9660", "cfgdata"},
                               {"/dev/sr0", "iso9660", "other"},
                               {"/dev/vda1", "ext4", "cfgdata"},
                               {"/dev/sr1", "iso9660", "cfgdata"}},
                              o);
  REQUIRE(out.size() == 3);
  CHECK(out[0].device == "/dev/sr1");
  CHECK(out[1].device == "/dev/sr2");
  CHECK(out[2].device == "/dev/sr0");
}

TEST_CASE("libblkid finds a real ISO (xorrisofs) on a loop device by label and by type") {
  TempDir t{"iso-test"};
  key_files(t.path / "src");
  std::string const label = unique_label("cfgt");
  run_ok("xorrisofs", {"-quiet", "-follow-links", "-joliet", "-rock", "-V", label, "-o", (t.path / "c.iso").string(),
                       (t.path / "src").string()});
  Loop loop(t.path / "c.iso");

  CredIsoOptions o;
  o.label = label;
  o.device = loop.dev;
  auto one = find_iso_candidates(o);
  REQUIRE(one.size() == 1);
  CHECK(one[0].type == "iso9660");
  CHECK(one[0].label == label);

  o.device.clear();  // the full scan (libblkid's device list) sees it too, first
  auto all = find_iso_candidates(o);
  REQUIRE_FALSE(all.empty());
  CHECK(all[0].device == loop.dev);
}

// This kernel has no iso9660 driver, so the libmount path is proven on an ext4
// image with the same files: mounted read-only in a private directory, read,
// and unmounted.
TEST_CASE("mounts the credential device read-only, reads it, unmounts and removes the mount point") {
  TempDir t{"iso-test"};
  key_files(t.path / "src");
  std::string const label = unique_label("cfge");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");

  CredIsoOptions o;
  o.label = label;
  o.fs_types = {"ext4"};
  o.device = loop.dev;
  o.mount_root = (t.path / "run").string();
  o.wait = std::chrono::milliseconds(0);
  auto c = load_credentials(o);
  REQUIRE(c);
  CHECK(c->registry == "ghcr.io");
  CHECK(c->username == "user");
  CHECK(c->token.reveal() == "tok-abc");
  CHECK((fs::status(o.mount_root).permissions() & fs::perms::all) == fs::perms::owner_all);  // 0700
  CHECK(fs::is_empty(o.mount_root));  // the private directory is gone
  CHECK_FALSE(mounted_under(o.mount_root));
}

TEST_CASE("a bad key on the device is CredInvalid, and the device is still unmounted") {
  TempDir t{"iso-test"};
  key_files(t.path / "src", "https://ghcr.io\n");
  std::string const label = unique_label("cfgb");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");
  CredIsoOptions o{.label = label, .device = loop.dev, .wait = std::chrono::milliseconds(0),
                   .mount_root = (t.path / "run").string(), .fs_types = {"ext4"}};
  auto c = load_credentials(o);
  REQUIRE_FALSE(c);
  CHECK(c.error().reason == Reason::CredInvalid);
  CHECK(c.error().message.find(loop.dev) != std::string::npos);
  CHECK(fs::is_empty(o.mount_root));
  CHECK_FALSE(mounted_under(o.mount_root));
}

TEST_CASE("no device with the key files within the wait is CredIsoMissing") {
  TempDir t{"iso-test"};
  fs::create_directories(t.path / "src" / "..data");
  write(t.path / "src" / "OTHER", "x");  // another ConfigMap disk
  std::string const label = unique_label("cfgn");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");
  CredIsoOptions o{.label = label, .device = loop.dev, .wait = std::chrono::milliseconds(300),
                   .poll_interval = std::chrono::milliseconds(100), .mount_root = (t.path / "run").string(),
                   .fs_types = {"ext4"}};
  auto const t0 = std::chrono::steady_clock::now();
  auto c = load_credentials(o);
  REQUIRE_FALSE(c);
  CHECK(c.error().reason == Reason::CredIsoMissing);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(300));
  CHECK(fs::is_empty(o.mount_root));
  CHECK_FALSE(mounted_under(o.mount_root));
}
