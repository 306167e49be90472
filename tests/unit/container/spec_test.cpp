#include "container/spec.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::container;
using json = nlohmann::json;

namespace {
ContainerSpec full() {
  return ContainerSpec{.name = "cosmicac-container",
                       .image = "ghcr.io/a/b:v1",
                       .image_id = "sha256:1111",
                       .env = {"A=1", "CFG={\"x\":1}"},
                       .mount_point = "/data",
                       .gpus = true,
                       .gpu_container = true};
}
}  // namespace

TEST_CASE("create body for GPU + TUN + bind + env is exactly what docker run sends") {
  json body = create_body(full());
  json expected_host = json::parse(R"({
    "Init": true,
    "RestartPolicy": {"Name": "unless-stopped", "MaximumRetryCount": 0},
    "IpcMode": "host",
    "Binds": ["/data:/data"],
    "DeviceRequests": [{"Driver": "", "Count": -1, "Capabilities": [["gpu"]]}],
    "CapAdd": ["NET_ADMIN"],
    "Devices": [{"PathOnHost": "/dev/net/tun", "PathInContainer": "/dev/net/tun", "CgroupPermissions": "rwm"}]
  })");
  CHECK(body.at("HostConfig") == expected_host);
  CHECK(body.at("Image") == "sha256:1111");
  CHECK(body.at("Env") == json::array({"A=1", "CFG={\"x\":1}"}));
  CHECK(body.at("Labels").at(kLabelSpecHash) == spec_hash(full()));
  CHECK(body.at("Labels").at(kLabelSpecHash).get<std::string>().size() == 64);
}

TEST_CASE("a plain spec has no binds, GPUs, caps or devices") {
  ContainerSpec s{.name = "n", .image = "x:1"};
  json host = create_body(s).at("HostConfig");
  CHECK_FALSE(host.contains("Binds"));
  CHECK_FALSE(host.contains("DeviceRequests"));
  CHECK_FALSE(host.contains("CapAdd"));
  CHECK_FALSE(host.contains("Devices"));
  CHECK(create_body(s).at("Image") == "x:1");
}

TEST_CASE("the hash follows every field; the label hides env values") {
  auto base = spec_hash(full());
  auto s = full();
  s.image_id = "sha256:2222";
  CHECK(spec_hash(s) != base);
  s = full();
  s.env[0] = "A=2";
  CHECK(spec_hash(s) != base);
  s = full();
  s.gpus = false;
  CHECK(spec_hash(s) != base);
  CHECK(spec_hash(full()) == base);
  std::string const label = spec_label(full()).dump();
  CHECK(label.find("\"x\":1") == std::string::npos);
  CHECK(label.find("CFG=") != std::string::npos);
}

TEST_CASE("changed fields name env variables, never their values") {
  auto old = full();
  auto now = full();
  now.env = {"A=secret-new", "B=2", "CFG={\"x\":1}"};
  now.image_id = "sha256:9";
  now.mount_point = "/other";
  auto ch = changed_fields(spec_label(old).dump(), spec_label(now));
  CHECK(ch == std::vector<std::string>{"Binds", "Env:A", "Env:B", "Image"});
  CHECK(changed_fields("", spec_label(now)) == std::vector<std::string>{"(no label)"});
}
