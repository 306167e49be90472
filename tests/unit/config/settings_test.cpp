#include "config/settings.hpp"

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <string>

using namespace cosmicac;
using namespace cosmicac::config;
using namespace std::chrono_literals;

namespace {
LoadedSettings load(std::string_view text) {
  auto r = parse_settings(text, "/etc/default/docker-bootstrap");
  INFO("text: " << text);
  if (!r) FAIL("unexpected error: " << r.error());
  return *r;
}
std::string error_of(std::string_view text) {
  auto r = parse_settings(text, "cfg");
  INFO("text: " << text);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  return r.error().message;
}
}  // namespace

TEST_CASE("settings: defaults") {
  auto const s = load("").settings;
  CHECK(s.mount_point.empty());
  CHECK(s.image.str() == "ghcr.io/tetherto/cosmicac-wrk-agent-inference:latest");
  CHECK(s.container_name == "cosmicac-container");
  CHECK(s.env.empty());
  CHECK(s.data_disk_min_bytes == 100ULL << 30);
  CHECK(s.data_disk_wait == 60s);
  CHECK(s.fstab_device_timeout == 30s);
  CHECK(s.cred_iso_label == "cfgdata");
  CHECK(s.docker_socket == "/var/run/docker.sock");
  CHECK(s.install_docker);
  CHECK(s.pull_policy == PullPolicy::Missing);
  CHECK(s.gpu_mode == GpuMode::All);
  CHECK(s.retry_budget == 600s);
  CHECK(s.health_timeout == 300s);
  CHECK(s.readiness_port == "org.cosmicac.bootstrap.0");
  CHECK(s.heartbeat == 5s);
  CHECK(s.console_device == "/dev/ttyS0");
}

TEST_CASE("settings: every key is read and typed") {
  auto const loaded = load(
      "MNT=/data//models/\n"
      "IMG=10.0.2.100:5000/team/model:v2\n"
      "NAME=llm-1\n"
      "JOB_TYPE=GPU_CONTAINER\n"
      "ENVS='CFG={url:\"http://h:8080/x\",n:5};MSG=hello world'\n"
      "DATA_DISK_SERIAL='QM 0001'\n"
      "DATA_DISK_MIN_SIZE=1T\n"
      "DATA_DISK_WAIT=2m\n"
      "FSTAB_DEVICE_TIMEOUT=45s\n"
      "CRED_ISO_LABEL=creds\n"
      "CRED_ISO_WAIT=10\n"
      "DOCKER_SOCKET=/run/docker.sock\n"
      "INSTALL_DOCKER=no\n"
      "PULL_POLICY=always\n"
      "RETRY_BUDGET=1h\n"
      "GPU_MODE=auto\n"
      "GPU_WAIT=90\n"
      "SETTLE_SECONDS=0\n"
      "HEALTH_TIMEOUT=10m\n"
      "READINESS_PORT=org.example.port\n"
      "HEARTBEAT_SECONDS=2\n"
      "CONSOLE_DEVICE=/dev/hvc0\n");
  CHECK(loaded.warnings.empty());
  auto const& s = loaded.settings;
  CHECK(s.mount_point == "/data/models");
  CHECK(s.image == ImageRef{"10.0.2.100:5000", "team/model", "v2", ""});
  CHECK(s.container_name == "llm-1");
  CHECK(s.job_type == "GPU_CONTAINER");
  CHECK(s.env == std::vector<std::string>{R"(CFG={"url":"http://h:8080/x","n":5})", "MSG=hello world"});
  CHECK(s.data_disk_serial == "QM 0001");
  CHECK(s.data_disk_min_bytes == 1ULL << 40);
  CHECK(s.data_disk_wait == 120s);
  CHECK(s.fstab_device_timeout == 45s);
  CHECK(s.cred_iso_label == "creds");
  CHECK(s.cred_iso_wait == 10s);
  CHECK(s.docker_socket == "/run/docker.sock");
  CHECK_FALSE(s.install_docker);
  CHECK(s.pull_policy == PullPolicy::Always);
  CHECK(s.retry_budget == 3600s);
  CHECK(s.gpu_mode == GpuMode::Auto);
  CHECK(s.gpu_wait == 90s);
  CHECK(s.settle == 0s);
  CHECK(s.health_timeout == 600s);
  CHECK(s.readiness_port == "org.example.port");
  CHECK(s.heartbeat == 2s);
  CHECK(s.console_device == "/dev/hvc0");
  CHECK(gpu_mode_name(s.gpu_mode) == "auto");
  CHECK(pull_policy_name(s.pull_policy) == "always");
}

TEST_CASE("settings: empty values keep defaults; unknown and repeated keys warn") {
  auto const loaded = load("IMG=\nNAME=\n# c\nFOO=1\nMNT=/mnt/a\nMNT=/mnt/b\n");
  CHECK(loaded.settings.image.str() == kDefaultImage);
  CHECK(loaded.settings.container_name == kDefaultContainerName);
  CHECK(loaded.settings.mount_point == "/mnt/b");
  CHECK(loaded.warnings == std::vector<std::string>{"/etc/default/docker-bootstrap line 4: unknown key FOO (ignored)",
                                                    "/etc/default/docker-bootstrap line 6: MNT is set 2 times (first "
                                                    "on line 5); the last one counts"});
}

// A warning per pair of repeats was once O(n²) in time and memory
// (4000 repeats: 8 million warnings, 878 MB). Now one per repeated key.
TEST_CASE("settings: 5000 repeats of a key are one warning with the count") {
  std::string text;
  for (int k = 0; k < 5000; ++k) text += "MNT=/mnt/d" + std::to_string(k) + "\nGPU_MODE=none\n";
  auto const loaded = parse_settings(text, "cfg");
  REQUIRE(loaded);
  CHECK(loaded->settings.mount_point == "/mnt/d4999");
  CHECK(loaded->warnings ==
        std::vector<std::string>{"cfg line 9999: MNT is set 5000 times (first on line 1); the last one counts",
                                 "cfg line 10000: GPU_MODE is set 5000 times (first on line 2); the last one counts"});
}

TEST_CASE("settings: unknown keys warn up to a bound, then as a count") {
  std::string text;
  for (int k = 0; k < 10000; ++k) text += "UNKNOWN_" + std::to_string(k) + "=x\n";
  auto const loaded = parse_settings(text, "cfg");
  REQUIRE(loaded);
  REQUIRE(loaded->warnings.size() == 21);
  CHECK(loaded->warnings.front() == "cfg line 1: unknown key UNKNOWN_0 (ignored)");
  CHECK(loaded->warnings[19] == "cfg line 20: unknown key UNKNOWN_19 (ignored)");
  CHECK(loaded->warnings.back() == "cfg: 9980 more unknown keys (ignored)");
}

TEST_CASE("settings: an empty CONSOLE_DEVICE turns the console mirror off (unlike other keys)") {
  CHECK(load("CONSOLE_DEVICE=\n").settings.console_device.empty());
  CHECK(load("CONSOLE_DEVICE=''\n").settings.console_device.empty());
  CHECK(load("CONSOLE_DEVICE=/dev/ttyS1\nCONSOLE_DEVICE=\n").settings.console_device.empty());
  CHECK(load("NAME=\n").settings.console_device == "/dev/ttyS0");
}

TEST_CASE("settings: CONSOLE_DEVICE must be a device path under /dev") {
  for (std::string bad : {"ttyS0", "/tmp/console", "/dev/", "/dev", "/dev/../etc/passwd", "/dev/./x", "/dev/x/",
                          "/dev/pts/..", "/devices/ttyS0"}) {
    INFO(bad);
    CHECK(error_of("CONSOLE_DEVICE=" + bad) ==
          "cfg line 1: CONSOLE_DEVICE: must be a device path under /dev (e.g. /dev/ttyS0), or empty to disable the "
          "console mirror");
  }
  CHECK(error_of("CONSOLE_DEVICE=\"/dev/tty\tS0\"").starts_with("cfg line 1: CONSOLE_DEVICE: "));
  CHECK(load("CONSOLE_DEVICE=/dev/serial/by-path/x-serial0\n").settings.console_device ==
        "/dev/serial/by-path/x-serial0");
}

TEST_CASE("settings: invalid values are errors naming key and line, not the value") {
  CHECK(error_of("\nMNT=relative/path") == "cfg line 2: MNT: must be an absolute path");
  CHECK(error_of("MNT=/etc") ==
        "cfg line 1: MNT: must be /data, /models or /scratch, or one name below them or below "
        "/mnt or /srv (letters, digits, '.', '_', '-'; at most 64 characters)");
  CHECK(error_of("A=1\nIMG=Bad/Name") == "cfg line 2: IMG: invalid image reference: repository name must be lowercase");
  CHECK(error_of("NAME=-x") ==
        "cfg line 1: NAME: not a valid container name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 128 characters)");
  CHECK(error_of("DATA_DISK_MIN_SIZE=lots").starts_with("cfg line 1: DATA_DISK_MIN_SIZE: expected a size"));
  CHECK(error_of("DATA_DISK_MIN_SIZE=0") == "cfg line 1: DATA_DISK_MIN_SIZE: must be greater than zero");
  CHECK(error_of("GPU_WAIT=soon").starts_with("cfg line 1: GPU_WAIT: expected a duration"));
  CHECK(error_of("INSTALL_DOCKER=maybe") == "cfg line 1: INSTALL_DOCKER: expected yes/no, true/false or 1/0");
  CHECK(error_of("PULL_POLICY=never") == "cfg line 1: PULL_POLICY: must be missing or always");
  CHECK(error_of("GPU_MODE=some") == "cfg line 1: GPU_MODE: must be all, none or auto");
  CHECK(error_of("HEARTBEAT_SECONDS=0") == "cfg line 1: HEARTBEAT_SECONDS: must be at least 1 second");
  CHECK(error_of("READINESS_PORT=../x").starts_with("cfg line 1: READINESS_PORT: "));
  CHECK(error_of("DOCKER_SOCKET=docker.sock") == "cfg line 1: DOCKER_SOCKET: must be an absolute path");
  CHECK(error_of("CRED_ISO_LABEL=" + std::string(33, 'x')).starts_with("cfg line 1: CRED_ISO_LABEL: "));
  auto const envs = error_of("MNT=/data\n\nENVS='A=1;TOKEN={k:\"hunter2'\n");
  CHECK(envs == "cfg line 3: ENVS: ENVS entry 2 (TOKEN): unterminated string at offset 11 of the literal");
  CHECK(envs.find("hunter2") == std::string::npos);
  CHECK(error_of("ENVS=\"X=1 $(touch /tmp/p)\"").starts_with("cfg line 1: ENVS: shell expansion"));
}

TEST_CASE("settings: JOB_TYPE is GPU_CONTAINER or unset; anything else names the key and the accepted values") {
  CHECK(load("JOB_TYPE=GPU_CONTAINER\n").settings.job_type == "GPU_CONTAINER");
  CHECK(load("JOB_TYPE=\n").settings.job_type.empty());
  CHECK(load("").settings.job_type.empty());
  // A typo used to be accepted and the job then ran without TUN.
  for (std::string bad : {"gpu_container", "GPU-CONTAINER", "CPU", "GPU_CONTAINERS"})
    CHECK(error_of("JOB_TYPE=" + bad) == "cfg line 1: JOB_TYPE: must be GPU_CONTAINER or empty (unset)");
}

TEST_CASE("settings: check_setting applies exactly the rule parse_settings applies") {
  CHECK(check_setting("MNT", "/data"));
  CHECK(check_setting("MNT", "/mnt/models"));
  for (auto sys : {"/etc", "/run/x", "/usr/local/bin", "/root/.ssh"})
    CHECK(check_setting("MNT", sys).error().message ==
          "must be /data, /models or /scratch, or one name below them or below /mnt or /srv "
          "(letters, digits, '.', '_', '-'; at most 64 characters)");
  CHECK_FALSE(check_setting("MNT", "/d\x1b"));
  CHECK(check_setting("JOB_TYPE", "GPU_CONTAINER"));
  CHECK_FALSE(check_setting("JOB_TYPE", "gpu_container"));
  CHECK(check_setting("JOB_TYPE", ""));  // empty means unset
  CHECK_FALSE(check_setting("NAME", "-x"));
  CHECK_FALSE(check_setting("DATA_DISK_SERIAL", "a\tb"));
  CHECK(check_setting("NOPE", "1").error().message == "NOPE is not a configuration key");
  // The same verdicts as parse_settings, key by key.
  for (std::string const line : {"MNT=/srv/x", "MNT=/proc", "MNT=/etc/cron.d", "IMG=Bad/Name", "NAME=ok",
                                 "GPU_MODE=some", "HEARTBEAT_SECONDS=0"}) {
    auto const eq = line.find('=');
    CHECK(static_cast<bool>(check_setting(line.substr(0, eq), line.substr(eq + 1))) ==
          static_cast<bool>(parse_settings(line, "cfg")));
  }
}

TEST_CASE("settings: load_settings reads a real file; a missing file means defaults") {
  auto const dir = std::filesystem::temp_directory_path() / ("cosmicac-settings-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto const path = (dir / "docker-bootstrap").string();

  auto missing = load_settings(path);
  REQUIRE(missing);
  CHECK(missing->settings.container_name == kDefaultContainerName);

  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("MNT=/models\nWHAT=1\nNAME=bad name\n", f);
  std::fclose(f);
  auto bad = load_settings(path);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == path + " line 3: NAME: unquoted whitespace in the value (quote the value)");

  f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("MNT=/models\nWHAT=1\n", f);
  std::fclose(f);
  auto good = load_settings(path);
  REQUIRE(good);
  CHECK(good->settings.mount_point == "/models");
  CHECK(good->warnings == std::vector<std::string>{path + " line 2: unknown key WHAT (ignored)"});

  auto dir_error = load_settings(dir.string());
  REQUIRE_FALSE(dir_error);
  CHECK(dir_error.error().message.starts_with(dir.string() + ": cannot read"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("settings: REGISTRY_MIRROR is http[s]://host[:port] and nothing else") {
  CHECK(load("").settings.registry_mirror.empty());
  for (const char* good :
       {"https://mirror.example:5000", "http://10.0.2.100:5001", "https://mirror.ns.svc", "http://localhost:5000"})
    CHECK(load(std::string("REGISTRY_MIRROR=") + good + "\n").settings.registry_mirror == good);
  // A bare word would make dockerd pull word/<path> from Docker Hub; a path,
  // a user or a query is not a registry's address.
  for (const char* bad :
       {"mirror.example:5000", "ftp://m.example", "https://", "https://mirror", "https://m.example/v2",
        "https://user:pw@m.example", "https://m.example:5000/", "https://m.example?x=1", "https://[::1]:5000",
        "https://m.example:99999", "https://-m.example"}) {
    CAPTURE(bad);
    auto const e = error_of(std::string("REGISTRY_MIRROR=") + bad);
    CHECK(e.starts_with("cfg line 1: REGISTRY_MIRROR: must be https://host[:port] or http://host[:port]"));
    CHECK(e.find("pw@") == std::string::npos);
  }
}

TEST_CASE("settings: ALLOWED_IMAGES refuses an IMG it does not admit, in either order, naming lines, not values") {
  auto const ok =
      load("ALLOWED_IMAGES=ghcr.io/acme/inference,ghcr.io/acme/models/\nIMG=ghcr.io/acme/models/llama:70b\n");
  CHECK(ok.settings.allowed_images == std::vector<std::string>{"ghcr.io/acme/inference", "ghcr.io/acme/models/"});
  CHECK(load("IMG=ghcr.io/acme/inference:v2\nALLOWED_IMAGES=ghcr.io/acme/inference\n").settings.image.tag == "v2");
  // The attack: a job's IMG naming the operator's root image (or anything else the token reads).
  CHECK(error_of("IMG=ghcr.io/tetherto/kubevirt-image:latest\nALLOWED_IMAGES=ghcr.io/acme/inference\n") ==
        "cfg line 1: IMG: names a repository that ALLOWED_IMAGES (line 2) does not admit");
  CHECK(error_of("ALLOWED_IMAGES=ghcr.io/acme/inference\nIMG=ghcr.io/acme/inference-debug\n") ==
        "cfg line 2: IMG: names a repository that ALLOWED_IMAGES (line 1) does not admit");
  CHECK(error_of("ALLOWED_IMAGES=ghcr.io/acme/inference\n") ==
        "cfg IMG (unset: its default): names a repository that ALLOWED_IMAGES (line 1) does not admit");
  CHECK(error_of("ALLOWED_IMAGES=acme/inference\n").starts_with("cfg line 1: ALLOWED_IMAGES: entry 1 is not"));
  CHECK(load("IMG=anything.example/x\n").settings.allowed_images.empty());  // unset: any image, as before
}

TEST_CASE("settings: READY_PROBE is http:PORT/PATH or tcp:PORT; its timing and threshold are bounded") {
  auto const none = load("");
  CHECK(none.settings.readiness.kind == ReadyProbe::Kind::None);
  CHECK(none.settings.failure_threshold == 3);
  auto const http = load(
                        "READY_PROBE=http:8000/health?full=1\nREADY_INITIAL_DELAY=2m\nREADY_TIMEOUT=5\n"
                        "READY_FAILURE_THRESHOLD=6\n")
                        .settings;
  CHECK(http.readiness.kind == ReadyProbe::Kind::Http);
  CHECK(http.readiness.port == 8000);
  CHECK(http.readiness.path == "/health?full=1");
  CHECK(http.readiness.initial_delay == 120s);
  CHECK(http.readiness.timeout == 5s);
  CHECK(http.failure_threshold == 6);
  auto const tcp = load("READY_PROBE=tcp:65535\n").settings;
  CHECK(tcp.readiness.kind == ReadyProbe::Kind::Tcp);
  CHECK(tcp.readiness.port == 65535);
  for (char const* bad : {"http:0/x", "http:65536/x", "http:8000", "http:8000health", "http:/health", "tcp:80/x",
                          "tcp:", "udp:53", "http:8000/a#frag", "HTTP:8000/x", "http:080000/x"}) {
    INFO(bad);
    auto const r = parse_settings(std::string("READY_PROBE=") + bad + "\n", "cfg");
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          "cfg line 1: READY_PROBE: must be http:PORT/PATH or tcp:PORT (port 1-65535, an "
          "absolute path)");
  }
  CHECK_FALSE(parse_settings("READY_TIMEOUT=0\n", "cfg"));
  CHECK_FALSE(parse_settings("READY_TIMEOUT=61\n", "cfg"));
  CHECK_FALSE(parse_settings("READY_FAILURE_THRESHOLD=0\n", "cfg"));
  CHECK_FALSE(parse_settings("READY_FAILURE_THRESHOLD=65\n", "cfg"));
  CHECK(check_setting("READY_PROBE", "http:8000/v1/models"));
  CHECK_FALSE(check_setting("READY_PROBE", "http:8000/v1 models"));
}

TEST_CASE("settings: READY_PROBE's text is the probe's one text form (one owner reads and writes it)") {
  for (char const* text : {"http:8000/health?full=1", "http:1/", "tcp:65535", "http:65535/v1/x%2Fy?a=b"}) {
    INFO(text);
    auto const s = load(std::string("READY_PROBE=") + text + "\nREADY_TIMEOUT=7\n").settings;
    CHECK(probe_text(s.readiness) == text);  // what the host writes and the watch keeps
    ReadyProbe again{.timeout = s.readiness.timeout};
    REQUIRE(parse_probe_text(probe_text(s.readiness), again));
    CHECK(again == s.readiness);
  }
  CHECK(probe_text(ReadyProbe{}).empty());  // no probe: no text
  ReadyProbe p{.timeout = std::chrono::seconds(3)};
  CHECK_FALSE(parse_probe_text("tcp:80/x", p));
  CHECK(p.timeout == std::chrono::seconds(3));  // the timings are not the text's
}
