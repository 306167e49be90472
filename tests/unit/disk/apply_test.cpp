// The whole apply() on a real loop device (partscan on) backed by a sparse
// 120 GiB file, with a temporary fstab and mount point. Needs root and loop
// devices: without them the test fails, saying so.
#include "disk/disk.hpp"
#include "disk/mount.hpp"
#include "disk/partition.hpp"
#include "disk/partition_node.hpp"
#include "disk/probe.hpp"

#include "common/file_io.hpp"

#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t GiB = 1ULL << 30;

// Unmounts the mount point on scope exit (before the loop device detaches).
struct Unmount {
  std::string path;
  ~Unmount() {
    while (::umount2(path.c_str(), 0) == 0) {
    }
  }
};

// The real system's facts, restricted to this loop device as the only disk
// (loop devices are never candidates on a real system).
SystemFacts facts_for(LoopDevice const& loop) {
  auto f = probe_system({.probe_content = false});
  REQUIRE(f);
  SystemFacts out = *f;
  out.disks.clear();
  for (auto d : f->disks) {
    if (d.name != loop.name()) continue;
    d.not_candidate.clear();
    d.content = probe_content(d.dev_path);
    d.content_probed = true;
    out.disks.push_back(d);
  }
  REQUIRE(out.disks.size() == 1);
  return out;
}

void spit(std::string const& p, std::string const& text) {
  std::FILE* f = std::fopen(p.c_str(), "w");
  REQUIRE(f);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

bool nosuid_nodev(std::string const& path) {
  struct statvfs v {};
  REQUIRE(::statvfs(path.c_str(), &v) == 0);
  return (v.f_flag & ST_NOSUID) != 0 && (v.f_flag & ST_NODEV) != 0;
}

void unmount_all(std::initializer_list<std::string> paths) {
  for (auto const& p : paths)
    while (::umount2(p.c_str(), 0) == 0) {
    }
}

std::string slurp(std::string const& p) {
  std::string out;
  if (FILE* f = std::fopen(p.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

}  // namespace

TEST_CASE("apply on a blank 120 GiB loop device: partition, format, mount, fstab; a re-run changes nothing") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 120 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  Unmount guard{mnt};
  DiskWanted const wanted{.mount_point = mnt, .partition_wait = 10s, .fstab_path = dir / "fstab"};

  DiskPlan const p = decide(facts_for(loop), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->classification.kind == ContentKind::Blank);

  std::vector<std::string> progress;
  auto const t0 = std::chrono::steady_clock::now();
  auto out = apply(p, wanted, [&](std::string_view m) { progress.emplace_back(m); });
  auto const took = std::chrono::steady_clock::now() - t0;
  REQUIRE(out);
  CHECK(out->partitioned);
  CHECK(out->formatted);
  CHECK_FALSE(out->adopted);
  CHECK_FALSE(out->already_mounted);
  CHECK(out->fstab_changed);
  CHECK(out->device == loop.path() + "p1");
  CHECK(out->fs_type == "ext4");
  CHECK_FALSE(out->uuid.empty());
  CHECK(progress.size() >= 4);
  CHECK(took < 60s);  // lazy init: seconds, not minutes

  // The mount point holds that filesystem, per mountinfo.
  struct stat part {};
  REQUIRE(::stat(out->device.c_str(), &part) == 0);
  auto m = mounted_at(mnt);
  REQUIRE(m);
  REQUIRE(*m);
  CHECK((*m)->devno == part.st_rdev);
  struct stat md {};
  REQUIRE(::stat(mnt.c_str(), &md) == 0);
  CHECK((md.st_mode & 0777) == 0755);
  CHECK(slurp(wanted.fstab_path)
            .find("UUID=" + out->uuid + " " + mnt + " ext4 nosuid,nodev,nofail,x-systemd.device-timeout=30s 0 2") !=
        std::string::npos);

  // Run again from a fresh look: ours, already mounted, nothing written.
  DiskPlan const again = decide(facts_for(loop), wanted);
  INFO(describe(again));
  REQUIRE_FALSE(again.refusal);
  CHECK(again.chosen->classification.kind == ContentKind::Ours);
  CHECK(again.chosen->already_mounted);
  std::vector<std::string> progress2;
  auto out2 = apply(again, wanted, [&](std::string_view msg) { progress2.emplace_back(msg); });
  REQUIRE(out2);
  CHECK_FALSE(out2->partitioned);
  CHECK_FALSE(out2->formatted);
  CHECK(out2->already_mounted);
  CHECK_FALSE(out2->fstab_changed);
  CHECK(out2->uuid == out->uuid);
  CHECK(out2->device == out->device);
  CHECK(out2->fs_type == "ext4");
  // Mounted and ours: no second look at the disk, no wait for the partition (each costs
  // seconds under emulation on the second boot's critical path).
  REQUIRE_FALSE(progress2.empty());
  CHECK(progress2.back().find(", as mounted") != std::string::npos);
  for (auto const& msg : progress2) CHECK(msg.find("waiting for partition") == std::string::npos);
}

// What the delivery-cloudinit VM hit: the disk unit read the new partition's
// (empty) area through the whole disk, then made the filesystem through the
// partition's node, which stayed open (held, then mounted). Linux keeps one
// page cache for the whole disk and another for each partition, and drops the
// whole disk's only when nothing has it (or a partition of it) open (here:
// udev's probes, then the held node, then the mount): the main
// unit's probe of the whole disk read the stale zeros, planned to format, and
// refused on finding ext4 there. mke2fs may or may not flush on its way out,
// so the filesystem is written here as plain bytes through the node.
TEST_CASE("probe_content sees a filesystem written through the partition while the partition stays open") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  REQUIRE(create_data_partition(loop.path()));
  // Opened first, as udev's probes may have it in the VM: the whole disk's cache then outlives each probe.
  auto node = wait_partition_node({}, loop.name(), 1, 10s);
  REQUIRE(node);
  UniqueFd const held(::open(node->c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(held.valid());
  ContentFacts const before = probe_content(loop.path());  // reads the partition's area: zeros, now cached
  REQUIRE(before.partitions.size() == 1);
  REQUIRE(before.partitions[0].content.type.empty());

  auto fs_img = make_sparse(dir / "fs.img", 64ULL << 20);
  run_ok("mkfs.ext4", {"-q", "-F", fs_img});
  std::string head(64 * 1024, '\0');
  {
    UniqueFd const src(::open(fs_img.c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(::pread(src.get(), head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
    UniqueFd const dst(::open(node->c_str(), O_WRONLY | O_CLOEXEC));
    REQUIRE(::pwrite(dst.get(), head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
    REQUIRE(::fsync(dst.get()) == 0);
  }

  ContentFacts const after = probe_content(loop.path());
  REQUIRE(after.probe_error.empty());
  REQUIRE(after.partitions.size() == 1);
  CHECK(after.partitions[0].content.type == "ext4");
  CHECK(after.partitions[0].content.uuid == probe_superblock(*node).signature.uuid);
}

TEST_CASE("apply resumes after a crash between partitioning and mkfs, and refuses a plan gone stale") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt";
  Unmount guard{mnt};
  DiskWanted const wanted{.mount_point = mnt, .min_bytes = 1, .partition_wait = 10s, .fstab_path = dir / "fstab"};

  // A plan made while the disk was blank, then "someone" partitions it: stale.
  DiskPlan const stale = decide(facts_for(loop), wanted);
  REQUIRE(stale.chosen);
  REQUIRE(stale.chosen->classification.kind == ContentKind::Blank);
  REQUIRE(create_data_partition(loop.path()));  // the crash happened right after this
  auto refused = apply(stale, wanted);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("changed since it was planned") != std::string::npos);

  DiskPlan const p = decide(facts_for(loop), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  CHECK(p.chosen->classification.kind == ContentKind::Ours);
  CHECK(p.chosen->classification.fs_type.empty());
  auto out = apply(p, wanted);
  REQUIRE(out);
  CHECK_FALSE(out->partitioned);
  CHECK(out->formatted);
  CHECK(probe_superblock(out->device).signature.label == kFilesystemLabel);
}

TEST_CASE("ensure_mounted: a different filesystem at the mount point is an error naming both") {
  TempDir dir;
  auto a = make_sparse(dir / "a.img", 64ULL << 20);
  auto b = make_sparse(dir / "b.img", 64ULL << 20);
  run_ok("mkfs.ext4", {"-q", a});
  run_ok("mkfs.ext4", {"-q", b});
  LoopDevice la(a), lb(b);
  std::string const mnt = dir / "mnt";
  Unmount guard{mnt};
  auto first = ensure_mounted(la.path(), "ext4", mnt);
  REQUIRE(first);
  CHECK_FALSE(*first);
  auto same = ensure_mounted(la.path(), "ext4", mnt);
  REQUIRE(same);
  CHECK(*same);
  auto other = ensure_mounted(lb.path(), "ext4", mnt);
  REQUIRE_FALSE(other);
  CHECK(other.error().reason == Reason::DiskError);
  CHECK(other.error().message.find(la.path()) != std::string::npos);
  CHECK(other.error().message.find(lb.path()) != std::string::npos);
}

// With a data root, a filesystem we make is laid out (mnt/ for MNT,
// docker/ for docker's store), MNT is a bind of mnt/, and fstab has the three
// lines; the plan, run again from a fresh look, changes nothing.
TEST_CASE("apply with a data root: our new filesystem at the data root, mnt/ bound at MNT, docker/ offered") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 120 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  std::string const root = dir / "var/lib/cosmicac/data";
  Unmount guard_root{root};
  Unmount guard{mnt};
  DiskWanted const wanted{.mount_point = mnt, .partition_wait = 10s, .fstab_path = dir / "fstab", .data_root = root};

  auto out = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(out);
  CHECK(out->formatted);
  CHECK(out->data_root == root);
  CHECK(out->docker_store == root + "/docker");
  CHECK(out->layout_note.empty());
  auto at_mnt = mounted_at(mnt);
  REQUIRE(at_mnt);
  REQUIRE(*at_mnt);
  CHECK((*at_mnt)->root == "/mnt");
  CHECK((*at_mnt)->devno == out->devno);
  auto at_root = mounted_at(root);
  REQUIRE(at_root);
  REQUIRE(*at_root);
  CHECK((*at_root)->root == "/");
  struct stat st {};
  CHECK(::stat((root + "/cosmicac-layout").c_str(), &st) == 0);
  CHECK(::stat((root + "/docker").c_str(), &st) == 0);
  // What the container is given holds nothing of docker's.
  CHECK(::stat((mnt + "/docker").c_str(), &st) != 0);
  std::string const fstab = slurp(wanted.fstab_path);
  CHECK(fstab.find("UUID=" + out->uuid + " " + root + " ext4 ") != std::string::npos);
  CHECK(fstab.find(root + "/mnt " + mnt + " none bind,nosuid,nodev,nofail,x-systemd.requires-mounts-for=" + root +
                   " 0 0") != std::string::npos);
  CHECK(fstab.find(root + "/docker /var/lib/docker none bind,nosuid,nodev,nofail,x-systemd.requires-mounts-for=" +
                   root + " 0 0") != std::string::npos);
  CHECK(fstab.find(" " + mnt + " ext4") == std::string::npos);

  // Again, from a fresh look: the disk is ours (its binds do not make it "in use"), nothing changes.
  DiskPlan const again = decide(facts_for(loop), wanted);
  INFO(describe(again));
  REQUIRE_FALSE(again.refusal);
  auto out2 = apply(again, wanted);
  REQUIRE(out2);
  CHECK(out2->already_mounted);
  CHECK_FALSE(out2->fstab_changed);
  CHECK(out2->docker_store == out->docker_store);
}

// A filesystem an earlier version made (files at its root) keeps them where
// they are: mounted directly at MNT, docker's store left on the root disk.
TEST_CASE("apply with a data root: an earlier version's filesystem stays at MNT with its files, nothing moved") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 120 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  std::string const root = dir / "var/lib/cosmicac/data";
  Unmount guard_root{root};
  Unmount guard{mnt};
  DiskWanted const earlier{.mount_point = mnt, .partition_wait = 10s, .fstab_path = dir / "fstab"};
  auto made = apply(decide(facts_for(loop), earlier), earlier);  // the earlier layout (no data root)
  REQUIRE(made);
  {
    std::FILE* f = std::fopen((mnt + "/model.bin").c_str(), "w");
    REQUIRE(f);
    std::fputs("weights\n", f);
    std::fclose(f);
  }
  while (::umount2(mnt.c_str(), 0) == 0) {
  }

  DiskWanted const wanted{.mount_point = mnt, .partition_wait = 10s, .fstab_path = dir / "fstab", .data_root = root};
  auto out = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(out);
  CHECK(out->data_root.empty());
  CHECK(out->docker_store.empty());
  CHECK(out->layout_note.find("earlier version") != std::string::npos);
  CHECK(slurp(mnt + "/model.bin") == "weights\n");
  auto at_mnt = mounted_at(mnt);
  REQUIRE(at_mnt);
  REQUIRE(*at_mnt);
  CHECK((*at_mnt)->root == "/");
  auto at_root = mounted_at(root);
  REQUIRE(at_root);
  CHECK_FALSE(*at_root);  // peeked at, then unmounted
  CHECK(slurp(wanted.fstab_path).find("UUID=" + out->uuid + " " + mnt + " ext4 ") != std::string::npos);
}

// The attack: on a VM of the earlier layout the filesystem's root is the
// container's MNT, so the container (root inside it) can write the layout
// marker and a docker/ tree holding a privileged container with a restart
// policy. The VM is re-created (a new root disk: a fresh fstab) with the same
// data disk; had the agent taken the marker for its layout, it would bind
// that docker/ over /var/lib/docker and dockerd would restore the plant.
TEST_CASE(
    "apply with a data root: a container's plant on an earlier-layout filesystem is never bound as docker's store") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  std::string const root = dir / "var/lib/cosmicac/data";
  Unmount guard_root{root};
  Unmount guard{mnt};
  DiskWanted const earlier{.mount_point = mnt, .min_bytes = 1, .partition_wait = 10s, .fstab_path = dir / "fstab.vm0"};
  REQUIRE(apply(decide(facts_for(loop), earlier), earlier));  // the earlier layout: the root at MNT

  // What the container writes through its MNT.
  std::string const id(64, 'a');
  spit(mnt + "/cosmicac-layout", "cosmicac-bootstrap data layout 1: mnt/ is MNT, docker/ is /var/lib/docker\n");
  std::filesystem::create_directories(mnt + "/mnt");
  std::filesystem::create_directories(mnt + "/docker/containers/" + id);
  std::filesystem::create_directories(mnt + "/docker/image/overlay2/layerdb/mounts/" + id);
  spit(mnt + "/docker/containers/" + id + "/hostconfig.json",
       R"({"Privileged":true,"RestartPolicy":{"Name":"always"},"Binds":["/:/host"]})");
  spit(mnt + "/docker/containers/" + id + "/config.v2.json", R"({"ID":")" + id + R"(","Name":"/planted"})");
  unmount_all({mnt});

  DiskWanted const wanted{.mount_point = mnt,
                          .min_bytes = 1,
                          .partition_wait = 10s,
                          .fstab_path = dir / "fstab.vm1",
                          .data_root = root};
  auto out = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(out);
  INFO(out->layout_note);
  CHECK(out->docker_store.empty());  // nothing for /var/lib/docker
  CHECK(out->data_root.empty());
  CHECK(out->layout_note.find("not trusted") != std::string::npos);
  // Treated as the earlier layout it is: at MNT as it is, nothing moved, nothing bound, the attribute not set.
  auto at_mnt = mounted_at(mnt);
  REQUIRE(at_mnt);
  REQUIRE(*at_mnt);
  CHECK((*at_mnt)->root == "/");
  auto at_root = mounted_at(root);
  REQUIRE(at_root);
  CHECK_FALSE(*at_root);
  CHECK(slurp(mnt + "/docker/containers/" + id + "/config.v2.json").find("planted") != std::string::npos);
  CHECK(::getxattr(mnt.c_str(), "trusted.cosmicac.layout", nullptr, 0) < 0);
  std::string const fstab = slurp(wanted.fstab_path);
  CHECK(fstab.find("/var/lib/docker") == std::string::npos);
  CHECK(fstab.find(" " + root + " ") == std::string::npos);
}

// A disk the previous version laid out carries the marker file only. On the
// root disk whose fstab mounts it at the data root (that agent accepted it
// there), it is marked and kept; a re-created VM does not trust it.
TEST_CASE("apply with a data root: the previous version's layout is accepted on its own root disk only") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  std::string const root = dir / "var/lib/cosmicac/data";
  Unmount guard_root{root};
  Unmount guard{mnt};
  DiskWanted const wanted{.mount_point = mnt,
                          .min_bytes = 1,
                          .partition_wait = 10s,
                          .fstab_path = dir / "fstab",
                          .data_root = root};
  auto made = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(made);
  REQUIRE_FALSE(made->docker_store.empty());
  REQUIRE(::removexattr(root.c_str(), "trusted.cosmicac.layout") == 0);  // as the previous version left it
  unmount_all({mnt, root});

  auto same = apply(decide(facts_for(loop), wanted), wanted);  // a reboot of the same VM
  REQUIRE(same);
  CHECK(same->docker_store == root + "/docker");
  char value[8] = {};
  CHECK(::getxattr(root.c_str(), "trusted.cosmicac.layout", value, sizeof value) == 1);
  CHECK(std::string(value) == "1");

  REQUIRE(::removexattr(root.c_str(), "trusted.cosmicac.layout") == 0);
  unmount_all({mnt, root});
  DiskWanted const recreated{.mount_point = mnt,
                             .min_bytes = 1,
                             .partition_wait = 10s,
                             .fstab_path = dir / "fstab.new",
                             .data_root = root};
  auto other = apply(decide(facts_for(loop), recreated), recreated);
  REQUIRE(other);
  CHECK(other->docker_store.empty());
  CHECK(other->layout_note.find("not trusted") != std::string::npos);
}

// An earlier boot's fstab (lines without nosuid,nodev) mounted the data
// filesystem and bound mnt/: the run remounts both with the flags, upgrades
// the lines once, and a bind it makes gets them even from a mount without.
TEST_CASE("apply with a data root: live mounts and fstab lines without nosuid,nodev get them") {
  TempDir dir;
  auto img = make_sparse(dir / "disk.img", 2 * GiB);
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt/data";
  std::string const root = dir / "var/lib/cosmicac/data";
  std::string const store_target = dir / "var/lib/docker";
  Unmount guard_store{store_target};
  Unmount guard_root{root};
  Unmount guard{mnt};
  DiskWanted const wanted{.mount_point = mnt,
                          .min_bytes = 1,
                          .partition_wait = 10s,
                          .fstab_path = dir / "fstab",
                          .data_root = root};
  auto made = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(made);
  CHECK(nosuid_nodev(root));
  CHECK(nosuid_nodev(mnt));
  unmount_all({mnt, root});

  // As the earlier boot left them.
  REQUIRE(::mount(made->device.c_str(), root.c_str(), "ext4", 0, nullptr) == 0);
  REQUIRE(::mount((root + "/mnt").c_str(), mnt.c_str(), nullptr, MS_BIND, nullptr) == 0);
  REQUIRE_FALSE(nosuid_nodev(root));
  REQUIRE_FALSE(nosuid_nodev(mnt));
  std::filesystem::create_directories(store_target);
  auto bound = ensure_bind_mounted(root + "/docker", store_target, made->devno, "/docker");
  REQUIRE(bound);
  CHECK(nosuid_nodev(store_target));
  CHECK_FALSE(nosuid_nodev(root));  // the bind's flags are its own
  spit(wanted.fstab_path,
       "UUID=" + made->uuid + " " + root + " ext4 defaults,nofail,x-systemd.device-timeout=30s 0 2\n" + root + "/mnt " +
           mnt + " none bind,nofail,x-systemd.requires-mounts-for=" + root + " 0 0\n" + root +
           "/docker /var/lib/docker none bind,nofail,x-systemd.requires-mounts-for=" + root + " 0 0\n");

  auto out = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(out);
  CHECK(out->already_mounted);
  CHECK(out->fstab_changed);
  CHECK(nosuid_nodev(root));
  CHECK(nosuid_nodev(mnt));
  std::string const fstab = slurp(wanted.fstab_path);
  INFO(fstab);
  CHECK(fstab.find("defaults") == std::string::npos);
  CHECK(fstab.find(" ext4 nosuid,nodev,nofail,") != std::string::npos);
  CHECK(fstab.find(mnt + " none bind,nosuid,nodev,nofail,") != std::string::npos);
  CHECK(fstab.find("/var/lib/docker none bind,nosuid,nodev,nofail,") != std::string::npos);
  auto again = apply(decide(facts_for(loop), wanted), wanted);
  REQUIRE(again);
  CHECK_FALSE(again->fstab_changed);
  CHECK(slurp(wanted.fstab_path) == fstab);
}

namespace {

// Runs `program` as nobody (uid and gid 65534, no groups) and returns what it prints.
std::string run_as_nobody(std::string const& program, std::vector<std::string> const& args) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (::setgroups(0, nullptr) == 0 && ::setresgid(65534, 65534, 65534) == 0 && ::setresuid(65534, 65534, 65534) == 0)
      ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

}  // namespace

// Why docker's store may be bound nosuid,nodev (disk/apply.cpp,
// bind_fstab_entry): a container's root filesystem is an overlay mount, and
// the kernel checks nosuid/nodev on the mount a program or a device node is
// opened through, not on the one its layers sit on.
TEST_CASE("an overlay whose layers sit on a nosuid,nodev mount still runs setuid programs and opens device nodes") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);  // nobody walks to the programs
  auto fs_img = make_sparse(dir / "fs.img", 64ULL << 20);
  run_ok("mkfs.ext4", {"-q", "-F", fs_img});
  LoopDevice loop(fs_img);
  std::string const store = dir / "store";
  std::string const merged = dir / "merged";
  Unmount guard_store{store};
  Unmount guard_merged{merged};
  std::filesystem::create_directories(store);
  std::filesystem::create_directories(merged);
  REQUIRE(::mount(loop.path().c_str(), store.c_str(), "ext4", MS_NOSUID | MS_NODEV, nullptr) == 0);
  for (auto const* d : {"lower", "upper", "work"}) std::filesystem::create_directories(store + "/" + d);
  std::filesystem::copy_file("/usr/bin/id", store + "/lower/id");
  REQUIRE(::chown((store + "/lower/id").c_str(), 0, 0) == 0);
  REQUIRE(::chmod((store + "/lower/id").c_str(), 04755) == 0);
  REQUIRE(::mknod((store + "/lower/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  std::string const opts = "lowerdir=" + store + "/lower,upperdir=" + store + "/upper,workdir=" + store + "/work";
  REQUIRE(::mount("overlay", merged.c_str(), "overlay", 0, opts.c_str()) == 0);

  CHECK(run_as_nobody(store + "/lower/id", {"-u"}) == "65534\n");  // the store itself: nosuid
  CHECK(run_as_nobody(merged + "/id", {"-u"}) == "0\n");           // through the overlay: setuid works
  CHECK(UniqueFd(::open((store + "/lower/null").c_str(), O_WRONLY | O_CLOEXEC)).valid() == false);  // nodev
  CHECK(UniqueFd(::open((merged + "/null").c_str(), O_WRONLY | O_CLOEXEC)).valid());
}
