#include "container/gpu.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::container;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

TEST_CASE("dockerd serves GPUs with the hook, an nvidia runtime or NVIDIA CDI devices") {
  using engine::parse_system_info;
  CHECK(docker_serves_gpus(parse_system_info("{}"), true));
  CHECK_FALSE(docker_serves_gpus(parse_system_info(R"({"Runtimes":{"runc":{}}})"), false));
  CHECK(docker_serves_gpus(parse_system_info(R"({"Runtimes":{"runc":{},"nvidia":{}}})"), false));
  CHECK(docker_serves_gpus(parse_system_info(R"({"DiscoveredDevices":[{"Source":"cdi","ID":"nvidia.com/gpu=0"}]})"),
                           false));
}

TEST_CASE("GPU readiness: device nodes waited for, then the hook is required") {
  TempDir t{"gpu-test"};
  fs::create_directories(t.path / "dev");
  GpuEnv env{.dev_root = (t.path / "dev").string(),
             .fs_root = t.path.string(),
             .wait = std::chrono::milliseconds(200),
             .poll_interval = std::chrono::milliseconds(50)};
  auto st = check_gpus_ready(engine::SystemInfo{}, env);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuUnavailable);
  CHECK(st.error().message.find("nvidiactl") != std::string::npos);

  std::ofstream(t.path / "dev/nvidiactl") << "";
  st = check_gpus_ready(engine::SystemInfo{}, env);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("nvidia-container-runtime-hook") != std::string::npos);
  CHECK(st.error().message.find("/usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin or /bin") !=
        std::string::npos);

  fs::create_directories(t.path / "usr/bin");
  std::ofstream(t.path / "usr/bin/nvidia-container-runtime-hook") << "#!/bin/true\n";
  CHECK_FALSE(nvidia_hook_installed(t.path.string()));  // not executable yet
  fs::permissions(t.path / "usr/bin/nvidia-container-runtime-hook", fs::perms::owner_all);
  CHECK(check_gpus_ready(engine::SystemInfo{}, env));
  fs::remove(t.path / "usr/bin/nvidia-container-runtime-hook");
  CHECK_FALSE(nvidia_hook_installed(t.path.string()));

  // Every directory of the one list (common/tool_dirs.hpp), /usr/local/sbin included: systemd's default PATH,
  // which dockerd searches.
  fs::create_directories(t.path / "usr/local/sbin");
  std::ofstream(t.path / "usr/local/sbin/nvidia-container-runtime-hook") << "#!/bin/true\n";
  fs::permissions(t.path / "usr/local/sbin/nvidia-container-runtime-hook", fs::perms::owner_all);
  CHECK(nvidia_hook_installed(t.path.string()));
}
