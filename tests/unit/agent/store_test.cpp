#include "agent/store.hpp"
#include "agent/store_reset.hpp"
#include "disk/layout.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace cosmicac::agent;
namespace fs = std::filesystem;

namespace {

std::string slurp(fs::path const& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(fs::path const& p, std::string const& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// One layer directory of overlay2 as dockerd 20.10+ writes it: diff/, link,
// work/work (mode 000), merged/, and its short link l/<link>.
void overlay_layer(fs::path const& store, std::string const& id, std::string const& link) {
  fs::path const dir = store / "overlay2" / id;
  fs::create_directories(dir / "diff/usr/bin");
  fs::create_directories(dir / "work/work");
  fs::create_directories(dir / "merged");
  ::chmod((dir / "work/work").c_str(), 0);
  spit(dir / "link", link);
  spit(dir / "diff/usr/bin/tool", "#!/bin/true\n");
  fs::create_directories(store / "overlay2/l");
  fs::create_directory_symlink("../" + id + "/diff", store / "overlay2/l" / link);
}

// A container of the earlier VM: its config (ENVS in plaintext), its
// read-write layer and init layer, their layerdb entry.
void container(fs::path const& store, std::string const& cid, std::string const& mount_id, std::string const& link) {
  spit(store / "containers" / cid / "config.v2.json", R"({"Config":{"Env":["API_KEY=earlier-vm-secret"]}})");
  spit(store / "containers" / cid / "hostconfig.json", R"({"RestartPolicy":{"Name":"unless-stopped"}})");
  fs::create_directories(store / "containers" / cid / "mounts");
  spit(store / "image/overlay2/layerdb/mounts" / cid / "mount-id", mount_id);
  spit(store / "image/overlay2/layerdb/mounts" / cid / "init-id", mount_id + "-init");
  spit(store / "image/overlay2/layerdb/mounts" / cid / "parent", "sha256:" + std::string(64, '1'));
  overlay_layer(store, mount_id, link);
  overlay_layer(store, mount_id + "-init", link + "I");
}

// An image: its layer and the image database.
void image(fs::path const& store) {
  overlay_layer(store, std::string(64, 'b'), "IMAGELAYER");
  spit(store / "image/overlay2/layerdb/sha256" / std::string(64, '1') / "cache-id", std::string(64, 'b'));
  spit(store / "image/overlay2/imagedb/content/sha256" / std::string(64, '2'), R"({"architecture":"amd64"})");
  spit(store / "image/overlay2/repositories.json", R"({"Repositories":{}})");
}

}  // namespace

// dockerd never has its store switched under a running container: the
// container keeps the store it runs from; the bind waits for the next boot.
TEST_CASE("store: bind before dockerd; restart an idle dockerd around the bind; never switch under a container") {
  CHECK(decide_store({.bound = true, .docker_active = true, .running_containers = 3}) == StoreAction::AlreadyBound);
  CHECK(decide_store({.bound = false, .docker_active = false}) == StoreAction::Bind);
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = 0}) ==
        StoreAction::RestartDockerAround);
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = 1}) == StoreAction::KeepRootStore);
  // Cannot tell: as if a container ran.
  CHECK(decide_store({.bound = false, .docker_active = true, .running_containers = -1}) == StoreAction::KeepRootStore);
}

TEST_CASE(
    "store: another root disk's store is claimed (its containers dropped) only while dockerd does not run on it") {
  CHECK_FALSE(must_claim_store({.owned = true}, StoreAction::Bind));
  CHECK_FALSE(must_claim_store({.bound = true, .owned = true}, StoreAction::AlreadyBound));
  CHECK(must_claim_store({.owned = false}, StoreAction::Bind));
  CHECK(must_claim_store({.docker_active = true, .owned = false}, StoreAction::RestartDockerAround));
  // The boot after a re-creation with fstab binds in place (or an upgrade): the disk unit, before docker.service.
  CHECK(must_claim_store({.bound = true, .docker_active = false, .owned = false}, StoreAction::AlreadyBound));
  // dockerd runs on it already: not under it.
  CHECK_FALSE(must_claim_store({.bound = true, .docker_active = true, .owned = false}, StoreAction::AlreadyBound));
  CHECK_FALSE(
      must_claim_store({.docker_active = true, .running_containers = 1, .owned = false}, StoreAction::KeepRootStore));
}

TEST_CASE("store: a dockerd process, whoever started it, is seen (the guard before dropping containers)") {
  cosmicac::test::TempDir proc;
  spit(proc.path / "1/comm", "systemd\n");
  spit(proc.path / "self/comm", "dockerd\n");  // not a pid
  spit(proc.path / "412/comm", "containerd\n");
  CHECK_FALSE(dockerd_running(proc.path.string()));
  spit(proc.path / "977/comm", "dockerd\n");
  CHECK(dockerd_running(proc.path.string()));
}

TEST_CASE("store: the earlier layout (no docker/ on the data disk) does nothing and says why") {
  cosmicac::disk::DiskOutcome disk;
  disk.layout_note = "kept: docker's image store stays on the root disk";
  cosmicac::engine::Client unused({.socket_path = "/nonexistent/docker.sock"});
  auto r = place_docker_store(disk, unused, {.mountinfo = "/nonexistent/mountinfo"});
  REQUIRE(r);
  CHECK(r->action == StoreAction::AlreadyBound);
  CHECK(r->message == disk.layout_note);
}

TEST_CASE("store: the root disk's instance id is made once and kept; a file that is not one is replaced") {
  cosmicac::test::TempDir dir;
  std::string const path = (dir.path / "var/lib/cosmicac/instance-id").string();
  auto first = instance_id(path);
  REQUIRE(first);
  CHECK(first->size() == 32);
  CHECK(first->find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(slurp(path) == *first + "\n");
  auto again = instance_id(path);
  REQUIRE(again);
  CHECK(*again == *first);
  cosmicac::test::TempDir other;
  auto elsewhere = instance_id((other.path / "instance-id").string());
  REQUIRE(elsewhere);
  CHECK(*elsewhere != *first);  // another root disk
  spit(path, "not an id\n");
  auto remade = instance_id(path);
  REQUIRE(remade);
  CHECK(remade->size() == 32);
  CHECK(*remade != *first);
}

// A re-created VM (a new root disk) finds the store of the VM before it: the
// images stay (no pull), the earlier VM's container goes with its layers and
// its configuration, before dockerd could restore it. The same VM keeps its own.
TEST_CASE("store: a store another VM used last loses its containers and their layers, keeps its images") {
  cosmicac::test::TempDir dir;
  fs::path const store = dir.path / "docker";
  fs::create_directories(store);
  std::string const cid(64, 'c');
  std::string const mount_id(64, 'd');
  container(store, cid, mount_id, "RWLAYER");
  image(store);
  std::string const earlier_vm = "0123456789abcdef0123456789abcdef";
  std::string const this_vm = "fedcba9876543210fedcba9876543210";
  REQUIRE(cosmicac::disk::write_trusted_attribute(store, cosmicac::disk::kStoreOwnerAttribute, earlier_vm));

  auto dropped = claim_store(store, this_vm);
  REQUIRE(dropped);
  CHECK(*dropped == 1);
  CHECK(fs::is_empty(store / "containers"));
  CHECK(fs::is_empty(store / "image/overlay2/layerdb/mounts"));
  CHECK_FALSE(fs::exists(fs::symlink_status(store / "overlay2" / mount_id)));
  CHECK_FALSE(fs::exists(fs::symlink_status(store / "overlay2" / (mount_id + "-init"))));
  CHECK_FALSE(fs::exists(fs::symlink_status(store / "overlay2/l/RWLAYER")));
  CHECK_FALSE(fs::exists(fs::symlink_status(store / "overlay2/l/RWLAYERI")));
  // The image is whole.
  CHECK(fs::is_regular_file(store / "overlay2" / std::string(64, 'b') / "diff/usr/bin/tool"));
  CHECK(fs::is_symlink(store / "overlay2/l/IMAGELAYER"));
  CHECK(fs::exists(store / "overlay2/l/IMAGELAYER"));
  CHECK(fs::is_regular_file(store / "image/overlay2/layerdb/sha256" / std::string(64, '1') / "cache-id"));
  CHECK(fs::is_regular_file(store / "image/overlay2/repositories.json"));
  CHECK(*cosmicac::disk::read_trusted_attribute(store, cosmicac::disk::kStoreOwnerAttribute) == this_vm);

  // This VM's dockerd makes its container; the VM reboots: the container stays.
  container(store, std::string(64, 'e'), std::string(64, 'f'), "OURLAYER");
  auto kept = claim_store(store, this_vm);
  REQUIRE(kept);
  CHECK(*kept == 0);
  CHECK(fs::is_regular_file(store / "containers" / std::string(64, 'e') / "config.v2.json"));
  CHECK(fs::is_directory(store / "overlay2" / std::string(64, 'f') / "diff"));

  // A store with no owner recorded (the previous version's) is another VM's too.
  fs::path const unrecorded = dir.path / "unrecorded";
  container(unrecorded, cid, mount_id, "RWLAYER");
  auto from_unrecorded = claim_store(unrecorded, this_vm);
  REQUIRE(from_unrecorded);
  CHECK(*from_unrecorded == 1);
  CHECK(fs::is_empty(unrecorded / "containers"));
}

TEST_CASE("store: dropping containers goes deeper than PATH_MAX, follows no symlink, and stops at a mount") {
  cosmicac::test::TempDir dir;
  fs::path const store = dir.path / "docker";
  std::string const cid(64, 'c');
  std::string const mount_id(64, 'd');
  container(store, cid, mount_id, "RWLAYER");
  // What the container wrote in its layer: a tree deeper than PATH_MAX, and
  // symlinks out of the store (to a file and to a directory).
  {
    int fd = ::open((store / "overlay2" / mount_id / "diff").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    for (int i = 0; i < 600; ++i) {
      REQUIRE(::mkdirat(fd, "deeper-directory", 0755) == 0);
      int const next = ::openat(fd, "deeper-directory", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      ::close(fd);
      REQUIRE(next >= 0);
      fd = next;
    }
    int const f = ::openat(fd, "bottom", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(f >= 0);
    ::close(f);
    ::close(fd);
  }
  spit(dir.path / "outside/keep.txt", "outside the store\n");
  fs::create_symlink(dir.path / "outside/keep.txt", store / "overlay2" / mount_id / "diff/file-link");
  fs::create_directory_symlink(dir.path / "outside", store / "overlay2" / mount_id / "diff/dir-link");
  fs::create_directory_symlink(dir.path / "outside", store / "containers" / cid / "mounts/escape");

  auto dropped = drop_containers(store.string());
  REQUIRE(dropped);
  CHECK(dropped->containers == 1);
  CHECK(dropped->layers == 2);
  CHECK_FALSE(fs::exists(fs::symlink_status(store / "overlay2" / mount_id)));
  CHECK(slurp(dir.path / "outside/keep.txt") == "outside the store\n");

  // A leftover mount inside a container's directory: not descended into, an error naming it.
  container(store, cid, mount_id, "RWLAYER");
  fs::path const shm = store / "containers" / cid / "mounts/shm";
  fs::create_directories(shm);
  REQUIRE(::mount("tmpfs", shm.c_str(), "tmpfs", 0, "size=1m") == 0);
  spit(shm / "data", "in the mount\n");
  auto refused = drop_containers(store.string());
  CHECK(slurp(shm / "data") == "in the mount\n");
  ::umount2(shm.c_str(), MNT_DETACH);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("mounts/shm") != std::string::npos);
  // Run again once the mount is gone: it finishes.
  auto finished = drop_containers(store.string());
  REQUIRE(finished);
  CHECK(fs::is_empty(store / "containers"));
}
