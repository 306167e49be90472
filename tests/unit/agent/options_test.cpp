#include "agent/options.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::agent;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {
void pci(fs::path const& root, std::string const& slot, std::string const& vendor, std::string const& pci_class) {
  fs::create_directories(root / "bus/pci/devices" / slot);
  std::ofstream(root / "bus/pci/devices" / slot / "vendor") << vendor << "\n";
  std::ofstream(root / "bus/pci/devices" / slot / "class") << pci_class << "\n";
}
}  // namespace

TEST_CASE("GPU mode auto looks for an NVIDIA PCI vendor in sysfs") {
  TempDir t{"gpu-test"};
  pci(t.path, "0000:00:01.0", "0x1af4", "0x030000");  // another vendor's display controller
  CHECK_FALSE(want_gpus(config::GpuMode::Auto, t.path.string()));
  CHECK(want_gpus(config::GpuMode::All, t.path.string()));
  pci(t.path, "0000:00:05.0", "0x10de", "0x030200");  // an NVIDIA 3D controller: a GPU
  CHECK(want_gpus(config::GpuMode::Auto, t.path.string()));
  CHECK_FALSE(want_gpus(config::GpuMode::None, t.path.string()));
}

TEST_CASE("GPU mode auto: a host whose only NVIDIA functions are an NVSwitch and an audio function has no GPU") {
  TempDir t{"gpu-test"};
  pci(t.path, "0000:00:01.0", "0x1af4", "0x030000");
  pci(t.path, "0000:07:00.0", "0x10de", "0x068000");  // NVSwitch: a bridge (0x0680)
  CHECK_FALSE(want_gpus(config::GpuMode::Auto, t.path.string()));
  pci(t.path, "0000:08:00.1", "0x10de", "0x040300");  // HD audio of a card whose display function is not here
  CHECK_FALSE(want_gpus(config::GpuMode::Auto, t.path.string()));
  CHECK(want_gpus(config::GpuMode::All, t.path.string()));  // asked for: still given
}

TEST_CASE("the settings become the modules' options, policies decided on the way") {
  auto loaded = config::parse_settings(
      "MNT=/data\nIMG=quay.io/x/y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
      "NAME=infer\nJOB_TYPE=GPU_CONTAINER\nENVS='A=1'\nDOCKER_SOCKET=/run/d.sock\nINSTALL_DOCKER=no\n"
      "PULL_POLICY=always\nGPU_MODE=none\nCRED_ISO_LABEL=creds\nCRED_ISO_WAIT=7\nRETRY_BUDGET=9\n"
      "SETTLE_SECONDS=3\nHEALTH_TIMEOUT=11\nGPU_WAIT=13\nDATA_DISK_WAIT=17\n",
      "test");
  REQUIRE(loaded);
  Environment const env{.fstab_path = "/tmp/fstab", .sysfs_root = "/tmp/sys", .dev_root = "/tmp/dev"};
  auto const o = module_options(loaded->settings, env);
  CHECK(o.disk.mount_point == "/data");
  CHECK(o.disk.wait == std::chrono::seconds(17));
  CHECK(o.disk.fstab_path == "/tmp/fstab");
  CHECK(o.probe.sysfs_root == "/tmp/sys");
  CHECK(o.engine.socket_path == "/run/d.sock");
  CHECK(o.docker.socket_path == "/run/d.sock");
  CHECK_FALSE(o.docker.install);
  CHECK(o.image.domain == "quay.io");
  CHECK(o.image.repository == "quay.io/x/y");
  CHECK(o.image.reference() == "quay.io/x/y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  CHECK(o.pull_policy == registry::PullPolicy::Always);
  CHECK(o.cred_iso.label == "creds");
  CHECK(o.cred_iso.wait == std::chrono::seconds(7));
  CHECK(o.retry.budget == std::chrono::seconds(9));
  CHECK(o.container.name == "infer");
  CHECK(o.container.env == std::vector<std::string>{"A=1"});
  CHECK(o.container.mount_point == "/data");
  CHECK_FALSE(o.container.gpus);  // GPU_MODE=none
  CHECK(o.container.gpu_container);
  CHECK(o.converge.gpu.wait == std::chrono::seconds(13));
  CHECK(o.converge.gpu.dev_root == "/tmp/dev");
  CHECK(o.converge.settle == std::chrono::seconds(3));
  CHECK(o.converge.health_timeout == std::chrono::seconds(11));

  auto defaults = config::parse_settings("", "test");
  REQUIRE(defaults);
  auto const d = module_options(defaults->settings, env);
  CHECK(d.pull_policy == registry::PullPolicy::Missing);
  CHECK(d.container.gpus);  // GPU_MODE=all
  CHECK_FALSE(d.container.gpu_container);
}

TEST_CASE("the disk step's options alone (what run --step=grow builds) are module_options' disk part") {
  auto loaded = config::parse_settings(
      "MNT=/data\nIMG=example.invalid/x:1\nDATA_DISK_WAIT=17\nDATA_DISK_SERIAL=pvc-data\nFSTAB_DEVICE_TIMEOUT=21\n",
      "test");
  REQUIRE(loaded);
  Environment const env{.fstab_path = "/tmp/fstab",
                        .sysfs_root = "/tmp/sys",
                        .dev_root = "/tmp/dev",
                        .data_root = "/tmp/data-root",
                        .instance_id_path = "/tmp/instance-id",
                        .growth_note_path = "/tmp/disk-grown",
                        .disk_lock_path = "/tmp/disk.lock"};
  DiskStepOptions const d = disk_step_options(loaded->settings, env);
  ModuleOptions const m = module_options(loaded->settings, env);
  CHECK(d.disk.mount_point == "/data");
  CHECK(d.disk.serial == "pvc-data");
  CHECK(d.disk.wait == std::chrono::seconds(17));
  CHECK(d.disk.fstab_device_timeout == std::chrono::seconds(21));
  CHECK(d.disk.data_root == "/tmp/data-root");
  CHECK(d.probe.dev_root == "/tmp/dev");
  CHECK(d.disk_lock_path == "/tmp/disk.lock");
  CHECK(d.growth_note_path == "/tmp/disk-grown");
  CHECK(d.instance_id_path == "/tmp/instance-id");
  CHECK(m.disk.mount_point == d.disk.mount_point);
  CHECK(m.disk.serial == d.disk.serial);
  CHECK(m.disk.wait == d.disk.wait);
  CHECK(m.disk.fstab_path == d.disk.fstab_path);
  CHECK(m.disk.data_root == d.disk.data_root);
  CHECK(m.probe.sysfs_root == d.probe.sysfs_root);
  CHECK(m.disk_lock_path == d.disk_lock_path);
  CHECK(m.growth_note_path == d.growth_note_path);
}
