#include "host/render/userdata.hpp"

#include "common/process.hpp"
#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/render/manifests.hpp"
#include "host/render/readiness_probe.hpp"
#include "host/spec/guest_layout.hpp"
#include "tests/unit/host/test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>

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

TEST_CASE("userdata: a #cloud-config document with the three files and argv runcmds") {
  std::string ud = render_userdata(example());
  REQUIRE(ud.rfind("#cloud-config\n", 0) == 0);
  auto doc = parse_yaml_or_json(ud, "user-data").value();
  REQUIRE(doc["write_files"].size() == 3);
  CHECK(file_entry(doc, "/etc/default/docker-bootstrap")["permissions"] == "0600");
  CHECK(file_entry(doc, "/etc/udev/rules.d/61-cosmicac-boot-cdrom.rules")["permissions"] == "0644");
  CHECK(file_entry(doc, "/etc/systemd/system/cosmicac-install.service")["permissions"] == "0644");
  REQUIRE(doc["runcmd"].size() == 2);
  CHECK(doc["runcmd"][0] == Json::array({"udevadm", "trigger", "--settle", "--action=change", "--subsystem-match=block",
                                         "--sysname-match=sr*"}));
  CHECK(doc["runcmd"][1] == Json::array({"systemctl", "enable", "--now", "--no-block", "cosmicac-install.service"}));
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
  CHECK(kv["GPU_COUNT"] == "8");
  CHECK(kv["IB_COUNT"] == "8");
  auto env = config::parse_envs(kv["ENVS"]).value();
  CHECK(env == std::vector<std::string>{"MODEL_ID=meta-llama/Llama-3.1-70B-Instruct", "TENSOR_PARALLEL=8",
                                        "SERVE_ARGS=--max-model-len=8192 --gpu-memory-utilization=0.92",
                                        R"(ROUTING={"region":"eu-1","sticky":true,"weights":[1,2,3]})"});
  // The whole file also passes the agent's settings validation, counts included.
  auto settings = config::parse_settings(text, "docker-bootstrap");
  REQUIRE(settings);
  CHECK(settings->settings.gpu_count == 8U);
  CHECK(settings->settings.ib_count == 8U);
  // readiness: the probe, its timings, and the first success's bound.
  CHECK(kv["READY_PROBE"] == "http:8000/health");
  auto const& ready = settings->settings.readiness;
  CHECK(ready.kind == ReadyProbe::Kind::Http);
  CHECK(ready.port == 8000U);
  CHECK(ready.path == "/health");
  CHECK(ready.initial_delay == std::chrono::seconds(0));
  CHECK(ready.timeout == std::chrono::seconds(1));
  CHECK(settings->settings.failure_threshold == 3U);
  CHECK(settings->settings.health_timeout.count() == 1800);
}

TEST_CASE("userdata: readiness by tcpSocket, every timing the spec sets, in the agent's settings") {
  auto spec = parse_job_spec(
                  "name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\nreadiness:\n  tcpSocket: {port: 6379}\n"
                  "  initialDelaySeconds: 45\n  timeoutSeconds: 7\n  failureThreshold: 9\n"
                  "  startupTimeoutSeconds: 5400\n",
                  "t")
                  .value();
  auto entries = guest_config_entries(spec);
  auto settings = config::parse_settings(config::encode_config_file(entries, "t"), "docker-bootstrap");
  REQUIRE(settings);
  auto const& s = settings->settings;
  CHECK(s.readiness.kind == ReadyProbe::Kind::Tcp);
  CHECK(s.readiness.port == 6379U);
  CHECK(s.readiness.path.empty());
  CHECK(s.readiness.initial_delay == std::chrono::seconds(45));
  CHECK(s.readiness.timeout == std::chrono::seconds(7));
  CHECK(s.failure_threshold == 9U);
  CHECK(s.health_timeout.count() == 5400);
}

TEST_CASE("userdata: no data disk → no MNT, no DATA_DISK_SERIAL") {
  auto spec = parse_job_spec("name: a\nnamespace: b\ncpu: 1\nmemory: 1Gi\n", "t").value();
  auto keys = guest_config_entries(spec);
  for (auto const& [k, v] : keys) {
    CHECK(k != "MNT");
    CHECK(k != "DATA_DISK_SERIAL");
    CHECK(k != "ENVS");
    CHECK(k != "GPU_COUNT");  // no GPU asked for: the agent checks no count
    CHECK(k != "IB_COUNT");
    // No readiness: the agent's own rule (HEALTHCHECK, settle); only the
    // failed looks it counts after ready follow the VMI probe's threshold.
    CHECK((k.rfind("READY_", 0) == std::string::npos || k == "READY_FAILURE_THRESHOLD"));
    CHECK(k != "HEALTH_TIMEOUT");
  }
  auto const threshold =
      std::find_if(keys.begin(), keys.end(), [](auto const& kv) { return kv.first == "READY_FAILURE_THRESHOLD"; });
  REQUIRE(threshold != keys.end());
  CHECK(threshold->second == std::to_string(kProbeFailureThreshold));  // the VMI probe's, rendered without readiness
}

TEST_CASE("userdata: the install unit mounts the boot CD-ROM's link, copies with mode 0755, runs install") {
  std::string unit = install_unit_text();
  CHECK(unit.find("ExecStartPre=/bin/mount -t iso9660 -o ro,nosuid,nodev,noexec /dev/cosmicac-boot-cdrom "
                  "/run/cosmicac-cd\n") != std::string::npos);
  CHECK(unit.find("ExecStartPre=/usr/bin/install -m 0755 /run/cosmicac-cd/docker-bootstrap.sh "
                  "/usr/local/bin/cosmicac-bootstrap\n") != std::string::npos);
  CHECK(unit.find("ExecStart=/usr/local/bin/cosmicac-bootstrap install\n") != std::string::npos);
  CHECK(unit.find("ExecStopPost=-/bin/umount /run/cosmicac-cd\n") != std::string::npos);
  CHECK(unit.find("Requires=dev-cosmicac\\x2dboot\\x2dcdrom.device\n") != std::string::npos);
  CHECK(unit.find("After=dev-cosmicac\\x2dboot\\x2dcdrom.device\n") != std::string::npos);
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

// The attack: a disk (a reused data PVC the tenant filled) labelled
// cosmicac-boot. /dev/disk/by-label/cosmicac-boot may name it, and the unit
// would install and run its "agent" as root. The unit mounts only the link
// that the rule gives a CD-ROM drive (KERNEL sr*) with the label.
TEST_CASE("userdata: the install unit takes the boot label from a CD-ROM drive only, never by-label") {
  std::string const unit = install_unit_text();
  CHECK(unit.find("by-label") == std::string::npos);
  auto doc = parse_yaml_or_json(render_userdata(example()), "user-data").value();
  std::string const rule =
      file_entry(doc, "/etc/udev/rules.d/61-cosmicac-boot-cdrom.rules")["content"].get<std::string>();
  CHECK(rule == boot_cdrom_rule_text());
  // One rule line: every match a udev key of ours, the link its only action.
  std::vector<std::string> rules;
  for (std::size_t b = 0, e; b < rule.size(); b = e + 1) {
    e = rule.find('\n', b);
    REQUIRE(e != std::string::npos);
    std::string const line = rule.substr(b, e - b);
    if (!line.empty() && line.front() != '#') rules.push_back(line);
  }
  REQUIRE(rules.size() == 1);
  CHECK(rules[0] == R"(ACTION!="remove", SUBSYSTEM=="block", KERNEL=="sr[0-9]*", ENV{ID_FS_TYPE}=="iso9660", )"
                    R"(ENV{ID_FS_LABEL_ENC}=="cosmicac-boot", SYMLINK+="cosmicac-boot-cdrom")");
  CHECK(unit.find("/dev/cosmicac-boot-cdrom ") != std::string::npos);
}

TEST_CASE("userdata: the install unit passes systemd-analyze verify") {
  std::string const tool = tool_path("systemd-analyze");
  REQUIRE_FALSE(tool.empty());  // systemd is a build dependency (packaging/install-deps)
  test::TempDir t;
  // verify insists that every Exec binary exists: the agent is not installed
  // here, so its path is swapped for one that is (as tests/unit/units does).
  std::string unit = install_unit_text();
  std::string const agent = kAgentPath;
  for (std::size_t at; (at = unit.find(agent)) != std::string::npos;) unit.replace(at, agent.size(), "/bin/true");
  std::string const path = t.path + "/" + kInstallUnit;
  test::write_text(path, unit);
  auto r = run_command({.program = tool, .args = {"verify", path}, .description = "systemd-analyze verify"}).value();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK((r.out + r.err).find(kInstallUnit) == std::string::npos);  // verify exits 0 on some warnings
}
