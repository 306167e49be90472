#include "registry/cred_iso.hpp"

#include "common/process.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

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

// A sysfs tree in which `device` is a SCSI device of peripheral type
// `scsi_type`: 5 is a CD-ROM drive (what sr binds), 0 a disk.
std::string fake_sysfs(fs::path const& root, std::string const& device, std::string const& scsi_type = "5") {
  struct stat st {};
  REQUIRE(::stat(device.c_str(), &st) == 0);
  fs::path const dir =
      root / "dev" / "block" / (std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev))) / "device";
  fs::create_directories(dir);
  write(dir / "type", scsi_type + "\n");
  return root.string();
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
  o.sysfs_root = fake_sysfs(t.path / "sys", loop.dev);
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
  o.sysfs_root = fake_sysfs(t.path / "sys", loop.dev);
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
  CredIsoOptions o{.label = label,
                   .device = loop.dev,
                   .wait = std::chrono::milliseconds(0),
                   .mount_root = (t.path / "run").string(),
                   .fs_types = {"ext4"},
                   .sysfs_root = fake_sysfs(t.path / "sys", loop.dev)};
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
  CredIsoOptions o{.label = label,
                   .device = loop.dev,
                   .wait = std::chrono::milliseconds(300),
                   .poll_interval = std::chrono::milliseconds(100),
                   .mount_root = (t.path / "run").string(),
                   .fs_types = {"ext4"},
                   .sysfs_root = fake_sysfs(t.path / "sys", loop.dev)};
  auto const t0 = std::chrono::steady_clock::now();
  auto c = load_credentials(o);
  REQUIRE_FALSE(c);
  CHECK(c.error().reason == Reason::CredIsoMissing);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(300));
  CHECK(fs::is_empty(o.mount_root));
  CHECK_FALSE(mounted_under(o.mount_root));
}

namespace {
// The body of the propagation test, in a forked child with its own mount
// namespace (the test process's mounts stay as they were). Returns "" when the
// ISO mount stayed private, else what went wrong.
std::string propagation_child(fs::path const& shared_dir, fs::path const& peer_dir, std::string const& device,
                              std::string const& label) {
  if (::unshare(CLONE_NEWNS) != 0) return std::string("unshare: ") + std::strerror(errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "cannot make / private";
  // A shared mount and its peer, as a container's bind of /run would be.
  if (::mount("tmpfs", shared_dir.c_str(), "tmpfs", 0, "mode=0755") != 0) return "cannot mount the tmpfs";
  if (::mount(nullptr, shared_dir.c_str(), nullptr, MS_SHARED, nullptr) != 0) return "cannot make it shared";
  if (::mount(shared_dir.c_str(), peer_dir.c_str(), nullptr, MS_BIND, nullptr) != 0) return "cannot bind the peer";
  // Sanity: the peer does see what is mounted under the shared one.
  fs::create_directories(shared_dir / "probe");
  if (::mount("tmpfs", (shared_dir / "probe").c_str(), "tmpfs", 0, nullptr) != 0) return "probe mount failed";
  std::ofstream(shared_dir / "probe" / "seen") << "x";
  bool const peers_work = fs::exists(peer_dir / "probe" / "seen");
  ::umount2((shared_dir / "probe").c_str(), 0);
  if (!peers_work) return "the bind is not a peer: the test proves nothing";

  // The checker stays in this (the caller's) namespace; the production code
  // calls while_mounted on its reader thread while the device is mounted.
  std::mutex mu;
  std::condition_variable cv;
  std::string mounted_at, verdict;
  bool asked = false, answered = false;
  std::thread checker([&] {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return asked; });
    fs::path const rel = fs::path(mounted_at).lexically_relative(shared_dir);
    if (fs::exists(peer_dir / rel / "DOCKER_TOKEN"))
      verdict += "the peer sees the ISO at " + (peer_dir / rel).string() + "; ";
    if (fs::exists(shared_dir / rel / "DOCKER_TOKEN")) verdict += "the caller's namespace sees the ISO; ";
    answered = true;
    cv.notify_all();
  });
  CredIsoOptions o{.label = label,
                   .device = device,
                   .wait = std::chrono::milliseconds(0),
                   .mount_root = (shared_dir / "run").string(),
                   .fs_types = {"ext4"},
                   .sysfs_root = (shared_dir.parent_path() / "sys").string()};
  bool saw_files = false;
  o.while_mounted = [&](std::string const& dir) {
    saw_files = fs::exists(fs::path(dir) / "DOCKER_TOKEN");
    std::unique_lock lk(mu);
    mounted_at = dir;
    asked = true;
    cv.notify_all();
    cv.wait(lk, [&] { return answered; });
  };
  auto c = load_credentials(o);
  if (!asked) {  // never mounted: let the checker go
    std::unique_lock lk(mu);
    asked = true;
    cv.notify_all();
  }
  checker.join();
  if (!c) return "load_credentials: " + c.error().message;
  if (!saw_files) verdict += "the mount point did not show the files while mounted; ";
  if (c->token.reveal() != "tok-abc") verdict += "wrong token; ";
  if (!fs::is_empty(o.mount_root)) verdict += "the mount point was not removed; ";
  return verdict;
}
}  // namespace

// The ISO mount must not propagate to shared mount peers while it exists: a
// peer would see the token's files, and keep them mounted if the agent died
// (the kernel here has no iso9660 driver: ext4, same path).
TEST_CASE("the credential mount does not propagate to a shared mount's peer while it is mounted") {
  TempDir t{"iso-test"};
  key_files(t.path / "src");
  std::string const label = unique_label("cfgp");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");
  fs::create_directories(t.path / "shared");
  fs::create_directories(t.path / "peer");
  fake_sysfs(t.path / "sys", loop.dev);

  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string const verdict = propagation_child(t.path / "shared", t.path / "peer", loop.dev, label);
    (void)!::write(fds[1], verdict.data(), verdict.size());
    ::_exit(verdict.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string verdict;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) verdict.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO(verdict);
  CHECK(verdict.empty());
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

TEST_CASE("a leftover mount point of a crashed run is detached and removed before the next mount") {
  TempDir t{"iso-test"};
  key_files(t.path / "src");
  std::string const label = unique_label("cfgl");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");
  auto const root = t.path / "run";
  fs::create_directories(root / "cred.crashd");  // an empty leftover
  fs::create_directories(root / "cred.mountd");  // one with something still mounted on it
  REQUIRE(::mount("tmpfs", (root / "cred.mountd").c_str(), "tmpfs", 0, nullptr) == 0);
  CredIsoOptions o{.label = label,
                   .device = loop.dev,
                   .wait = std::chrono::milliseconds(0),
                   .mount_root = root.string(),
                   .fs_types = {"ext4"},
                   .sysfs_root = fake_sysfs(t.path / "sys", loop.dev)};
  auto c = load_credentials(o);
  REQUIRE(c);
  CHECK(fs::is_empty(root));
  CHECK_FALSE(mounted_under(root.string()));
}

// The attack: a disk that is not a CD-ROM (a reused data PVC, which the tenant
// filled) carries the credential label and valid key files of the tenant's
// choosing. It is never probed, mounted or read; only a CD-ROM is.
TEST_CASE("a disk that is not a CD-ROM is not used, even with the label and valid credential files") {
  TempDir t{"iso-test"};
  key_files(t.path / "src", "evil.example\n");
  std::string const label = unique_label("cfgd");
  run_ok("mkfs.ext4", {"-q", "-F", "-L", label, "-d", (t.path / "src").string(), (t.path / "c.img").string(), "4M"});
  Loop loop(t.path / "c.img");
  for (std::string const type : {"0", "", "none"}) {  // a SCSI disk; no SCSI type (virtio-blk, NVMe, loop)
    INFO("SCSI type '" << type << "'");
    fs::remove_all(t.path / "sys");
    std::string const sysfs = type == "none" ? (t.path / "sys").string() : fake_sysfs(t.path / "sys", loop.dev, type);
    CHECK_FALSE(is_cdrom(loop.dev, sysfs));
    bool mounted = false;
    CredIsoOptions o{.label = label,
                     .device = loop.dev,
                     .wait = std::chrono::milliseconds(0),
                     .mount_root = (t.path / "run").string(),
                     .fs_types = {"ext4"},
                     .sysfs_root = sysfs,
                     .while_mounted = [&](std::string const&) { mounted = true; }};
    CHECK(find_iso_candidates(o).empty());
    auto c = load_credentials(o);
    REQUIRE_FALSE(c);
    CHECK(c.error().reason == Reason::CredIsoMissing);
    CHECK_FALSE(mounted);
    o.device.clear();  // the full scan does not take it either
    for (auto const& cand : find_iso_candidates(o)) CHECK(cand.device != loop.dev);
  }
  // The same disk marked as a CD-ROM drive is read: the device type alone decides.
  CredIsoOptions cd{.label = label,
                    .device = loop.dev,
                    .wait = std::chrono::milliseconds(0),
                    .mount_root = (t.path / "run").string(),
                    .fs_types = {"ext4"},
                    .sysfs_root = fake_sysfs(t.path / "sys", loop.dev, "5")};
  auto c = load_credentials(cd);
  REQUIRE(c);
  CHECK(c->registry == "evil.example");
}

TEST_CASE("is_cdrom: not a block device, or no sysfs entry, is not a CD-ROM") {
  TempDir t{"iso-test"};
  write(t.path / "file", "x");
  CHECK_FALSE(is_cdrom((t.path / "file").string(), (t.path / "sys").string()));
  CHECK_FALSE(is_cdrom("/nonexistent/sr0", "/sys"));
  CHECK_FALSE(is_cdrom("/dev/null", "/sys"));  // a character device
}
