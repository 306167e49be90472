// packaging/docker-bootstrap.default: the commented config shipped in the .deb
// and the ConfigMap must list every key of config/settings.hpp with its real
// default, so that uncommenting a line never changes behaviour by surprise.
#include "config/settings.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string read_file(std::string const& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_key_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Lines "#KEY=value" (no space after '#') become "KEY=value"; their keys are collected.
std::string uncomment_keys(std::string const& text, std::set<std::string>& keys) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 1 && line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z') {
      auto eq = line.find('=');
      REQUIRE(eq != std::string::npos);
      std::string key = line.substr(1, eq - 1);
      for (char c : key) REQUIRE(is_key_char(c));
      keys.insert(key);
      line.erase(0, 1);
    }
    out += line + "\n";
  }
  return out;
}

// The keys settings.hpp documents: member comments starting "// KEY" (an
// all-caps word of 3+ characters, at the end of the line or followed by ':',
// ',' or " ("). "// GPU health (gpu/), …" is a heading: the word is followed
// by a lower-case one.
std::set<std::string> documented_keys(std::string const& header) {
  std::set<std::string> keys;
  std::istringstream in(header);
  for (std::string line; std::getline(in, line);) {
    auto c = line.find("// ");
    if (c == std::string::npos) continue;
    std::size_t b = c + 3, e = b;
    while (e < line.size() && is_key_char(line[e])) ++e;
    bool const word_ends = e == line.size() || !(line[e] >= 'a' && line[e] <= 'z');
    bool const heading = e + 1 < line.size() && line[e] == ' ' && line[e + 1] >= 'a' && line[e + 1] <= 'z';
    if (e >= b + 3 && word_ends && !heading && line[b] >= 'A' && line[b] <= 'Z') keys.insert(line.substr(b, e - b));
  }
  return keys;
}

void require_defaults(cosmicac::config::Settings const& s) {
  using cosmicac::config::Settings;
  Settings const d{};
  CHECK(s.mount_point == d.mount_point);
  CHECK(s.image == cosmicac::config::parse_image_ref(cosmicac::config::kDefaultImage).value());
  CHECK(s.container_name == cosmicac::config::kDefaultContainerName);
  CHECK(s.job_type == d.job_type);
  CHECK(s.env == d.env);
  CHECK(s.data_disk_serial == d.data_disk_serial);
  CHECK(s.data_disk_min_bytes == d.data_disk_min_bytes);
  CHECK(s.data_disk_wait == d.data_disk_wait);
  CHECK(s.fstab_device_timeout == d.fstab_device_timeout);
  CHECK(s.cred_iso_label == d.cred_iso_label);
  CHECK(s.cred_iso_wait == d.cred_iso_wait);
  CHECK(s.docker_socket == d.docker_socket);
  CHECK(s.install_docker == d.install_docker);
  CHECK(s.pull_policy == d.pull_policy);
  CHECK(s.retry_budget == d.retry_budget);
  CHECK(s.gpu_mode == d.gpu_mode);
  CHECK(s.gpu_wait == d.gpu_wait);
  CHECK(s.settle == d.settle);
  CHECK(s.health_timeout == d.health_timeout);
  CHECK(s.failure_log_lines == d.failure_log_lines);
  CHECK(s.readiness_port == d.readiness_port);
  CHECK(s.heartbeat == d.heartbeat);
  CHECK(s.console_device == d.console_device);
  CHECK(s.gpu_count == d.gpu_count);
  CHECK(s.ib_count == d.ib_count);
  CHECK(s.gpu_check == d.gpu_check);
  CHECK(s.fabric_wait == d.fabric_wait);
  CHECK(s.fabric_required == d.fabric_required);
  CHECK(s.gpu_check_nvidia_smi == d.gpu_check_nvidia_smi);
  CHECK(s.gpu_check_sysfs == d.gpu_check_sysfs);
}

const std::string kDefaultFile = COSMICAC_SOURCE_DIR "/packaging/docker-bootstrap.default";

}  // namespace

TEST_CASE("default config as shipped parses cleanly to the defaults", "[packaging]") {
  auto r = cosmicac::config::parse_settings(read_file(kDefaultFile), kDefaultFile);
  REQUIRE(r);
  CHECK(r->warnings.empty());
  require_defaults(r->settings);
}

TEST_CASE("default config: every commented key, uncommented, is known and is the default", "[packaging]") {
  std::set<std::string> keys;
  std::string text = uncomment_keys(read_file(kDefaultFile), keys);
  auto r = cosmicac::config::parse_settings(text, kDefaultFile);
  REQUIRE(r);
  for (auto const& w : r->warnings) FAIL_CHECK("warning: " << w);
  require_defaults(r->settings);

  std::set<std::string> documented = documented_keys(read_file(COSMICAC_SOURCE_DIR "/config/settings.hpp"));
  REQUIRE(documented.size() >= 10);  // the header's "// KEY: ..." comments were found at all
  CHECK(keys == documented);
}
