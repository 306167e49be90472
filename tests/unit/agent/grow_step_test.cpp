// `run --step=grow` (udev's, on any disk's resize): only a growth of our data
// disk is its business; anything else says nothing to the host. What it says
// goes to this boot's state, resumed: a ready VM stays ready.
#include "agent/bootstrap.hpp"
#include "config/settings.hpp"
#include "readiness/reporter.hpp"
#include "readiness/state_file.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace cosmicac;
using cosmicac::test::TempDir;

namespace {

agent::Environment empty_system(TempDir const& t) {
  std::filesystem::create_directories(t.path / "sys/class/block");
  std::filesystem::create_directories(t.path / "dev");
  std::ofstream(t.path / "fstab").flush();
  return agent::Environment{.fstab_path = (t.path / "fstab").string(),
                            .sysfs_root = (t.path / "sys").string(),
                            .dev_root = (t.path / "dev").string(),
                            .data_root = (t.path / "data-root").string(),
                            .instance_id_path = (t.path / "instance-id").string(),
                            .growth_note_path = (t.path / "disk-grown").string(),
                            .disk_lock_path = (t.path / "disk.lock").string()};
}

}  // namespace

TEST_CASE(
    "run --step=grow: no data disk configured, or none of ours grew: exit 0, nothing said, nothing written; "
    "a system it cannot look at: exit 1, nothing said") {
  TempDir t{"agent-grow"};
  auto const env = empty_system(t);
  std::vector<std::string> said;
  auto say = [&](std::string_view m) { said.emplace_back(m); };

  auto none = config::parse_settings("IMG=example.invalid/x:1\n", "cfg");
  REQUIRE(none);
  CHECK(agent::run_grow_only(none->settings, env, say) == 0);

  // MNT set, and no disk at all where the system is looked at: another disk's
  // resize, as far as the agent can tell. Not a refusal to report: the boot's
  // disk step reports a missing disk, not a live growth.
  auto data = config::parse_settings("IMG=example.invalid/x:1\nMNT=/data\n", "cfg");
  REQUIRE(data);
  CHECK(agent::run_grow_only(data->settings, env, say) == 0);
  CHECK(said.empty());
  // A system it cannot look at: failed (the journal says why), still not the host's business.
  std::filesystem::remove(t.path / "sys/class/block");
  CHECK(agent::run_grow_only(data->settings, env, say) == 1);
  CHECK(said.empty());
  CHECK_FALSE(std::filesystem::exists(t.path / "data-root"));
  CHECK_FALSE(std::filesystem::exists(t.path / "disk-grown"));
  CHECK(std::filesystem::is_empty(t.path / "dev"));
}

TEST_CASE("a live growth's progress, resumed into a ready boot's state: still ready, seq goes on") {
  TempDir t{"agent-grow-state"};
  readiness::ReporterOptions ro;
  ro.state_path = (t.path / "state.json").string();
  {
    readiness::Reporter boot(ro);
    boot.publish(readiness::started(readiness::Step::Disk));
    boot.publish(readiness::done(readiness::Step::Disk, std::chrono::milliseconds(5)));
    boot.publish(readiness::ready({.name = "inference", .id = "c0ffee"}, std::chrono::milliseconds(9)));
    boot.flush(std::chrono::milliseconds(500));
  }
  auto before = readiness::read_state(ro.state_path);
  REQUIRE(before);
  REQUIRE(before->phase == readiness::Phase::Ready);
  ro.resume = *before;
  {
    readiness::Reporter live(ro);
    live.publish(readiness::progress(readiness::Step::Disk, "grew /data from 150.0 GiB to 200.0 GiB"));
    live.flush(std::chrono::milliseconds(500));
  }
  auto after = readiness::read_state(ro.state_path);
  REQUIRE(after);
  CHECK(after->phase == readiness::Phase::Ready);
  CHECK(after->last_seq > before->last_seq);
  REQUIRE(after->step(readiness::Step::Disk));
  CHECK(after->step(readiness::Step::Disk)->message == "grew /data from 150.0 GiB to 200.0 GiB");
  REQUIRE(after->container);
  CHECK(after->container->id == "c0ffee");
}
