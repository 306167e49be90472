#include "host/userdata.hpp"

#include "common/process.hpp"
#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "config/settings.hpp"
#include "host/guest_layout.hpp"
#include "host/yaml_json.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::host;

namespace {

JobSpec example() { return load_job_spec(COSMICAC_SOURCE_DIR "/host/examples/h100-8gpu.yaml").value(); }

Json file_entry(Json const& doc, std::string const& path) {
  for (auto const& f : doc["write_files"])
    if (f["path"] == path) return f;
  FAIL("user-data writes no " + path);
  return {};
}

}  // namespace

TEST_CASE("userdata: a #cloud-config document with the two files and an argv runcmd") {
  std::string ud = render_userdata(example());
  REQUIRE(ud.rfind("#cloud-config\n", 0) == 0);
  auto doc = parse_yaml_or_json(ud, "user-data").value();
  REQUIRE(doc["write_files"].size() == 2);
  CHECK(file_entry(doc, "/etc/default/docker-bootstrap")["permissions"] == "0600");
  CHECK(file_entry(doc, "/etc/systemd/system/cosmicac-install.service")["permissions"] == "0644");
  REQUIRE(doc["runcmd"].size() == 1);
  CHECK(doc["runcmd"][0] == Json::array({"systemctl", "enable", "--now", "--no-block", "cosmicac-install.service"}));
}

TEST_CASE("userdata: the guest config reads back, through the agent's own parsers, to the spec") {
  JobSpec spec = example();
  auto doc = parse_yaml_or_json(render_userdata(spec), "user-data").value();
  std::string text = file_entry(doc, "/etc/default/docker-bootstrap")["content"].get<std::string>();
  auto entries = config::parse_config_file(text, "docker-bootstrap").value();
  std::map<std::string, std::string> kv;
  for (auto const& e : entries) kv[e.key] = e.value;
  CHECK(kv["IMG"] == "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest");
  CHECK(kv["NAME"] == "cosmicac-container");
  CHECK(kv["MNT"] == "/data");
  CHECK(kv["JOB_TYPE"] == "GPU_CONTAINER");
  CHECK(kv["DATA_DISK_SERIAL"] == "cosmicac-data");
  CHECK(kv["CRED_ISO_LABEL"] == kCredVolumeLabel);
  auto env = config::parse_envs(kv["ENVS"]).value();
  CHECK(env == std::vector<std::string>{"MODEL_ID=meta-llama/Llama-3.1-70B-Instruct", "TENSOR_PARALLEL=8",
                                        "SERVE_ARGS=--max-model-len=8192 --gpu-memory-utilization=0.92",
                                        R"(ROUTING={"region":"eu-1","sticky":true,"weights":[1,2,3]})"});
  // The whole file also passes the agent's settings validation.
  CHECK(config::parse_settings(text, "docker-bootstrap"));
}

TEST_CASE("userdata: no data disk → no MNT, no DATA_DISK_SERIAL") {
  auto spec = parse_job_spec("name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\n", "t").value();
  auto keys = guest_config_entries(spec);
  for (auto const& [k, v] : keys) {
    CHECK(k != "MNT");
    CHECK(k != "DATA_DISK_SERIAL");
    CHECK(k != "ENVS");
  }
}

TEST_CASE("userdata: the install unit mounts the boot ISO by label, copies with mode 0755, runs install") {
  std::string unit = install_unit_text();
  CHECK(unit.find("ExecStartPre=/bin/mount -t iso9660 -o ro,nosuid,nodev,noexec /dev/disk/by-label/cosmicac-boot "
                  "/run/cosmicac-cd\n") != std::string::npos);
  CHECK(unit.find("ExecStartPre=/usr/bin/install -m 0755 /run/cosmicac-cd/docker-bootstrap.sh "
                  "/usr/local/bin/cosmicac-bootstrap\n") != std::string::npos);
  CHECK(unit.find("ExecStart=/usr/local/bin/cosmicac-bootstrap install\n") != std::string::npos);
  CHECK(unit.find("ExecStopPost=-/bin/umount /run/cosmicac-cd\n") != std::string::npos);
  CHECK(unit.find("After=dev-disk-by\\x2dlabel-cosmicac\\x2dboot.device\n") != std::string::npos);
  CHECK(unit.find("Type=oneshot\n") != std::string::npos);
}

TEST_CASE("userdata: systemd_escape_path agrees with the real systemd-escape") {
  std::string tool = tool_path("systemd-escape");
  REQUIRE_FALSE(tool.empty());  // systemd is a build dependency (packaging/install-deps)
  for (std::string p : {"/dev/disk/by-label/cosmicac-boot", "/dev/disk/by-label/a.b_c", "/run/x y/.z",
                        "/dev/disk/by-id/virtio-cosmicac-data"}) {
    auto r = run_command({.program = tool, .args = {"--path", p}, .description = "systemd-escape"}).value();
    REQUIRE(r.exit_code == 0);
    std::string expected = r.out.substr(0, r.out.find('\n'));
    CHECK(systemd_escape_path(p) == expected);
  }
}
