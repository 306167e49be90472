#include "disk/describe.hpp"
#include "synthetic_facts.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;

namespace {
SystemFacts two_disks(ContentFacts second) {
  SystemFacts f;
  add_disk(f, make_disk("vda", 20, whole_fs_content("ext4", "filesystem")));
  f.mounts.push_back({.target = "/", .source = "/dev/vda", .device = "vda"});
  add_disk(f, make_disk("vdb", 200, std::move(second), "pvc-1234"));
  return f;
}
bool contains(std::string const& hay, std::string const& needle) { return hay.find(needle) != std::string::npos; }
}  // namespace

TEST_CASE("describe: candidates, exclusions, the choice and numbered actions") {
  DiskPlan const p = decide(two_disks(blank_content()), {.mount_point = "/data"});
  std::string const text = describe(p);
  INFO(text);
  CHECK(contains(text, "Data disk for /data"));
  CHECK(contains(text, "/dev/vda  20 GiB"));
  CHECK(contains(text, "[excluded: backs the root filesystem"));
  CHECK(contains(text, "serial \"pvc-1234\""));
  CHECK(contains(text, "chosen: /dev/vdb (200 GiB)"));
  CHECK(contains(text, "1. write a GPT on /dev/vdb"));
  CHECK(contains(text, "4. make /etc/fstab mount UUID=<new> at /data"));
  CHECK_FALSE(contains(text, "refused"));
}

TEST_CASE("describe: a refusal says nothing will be written") {
  DiskPlan const p = decide(two_disks(whole_fs_content("crypto_LUKS", "crypto")), {.mount_point = "/data"});
  std::string const text = describe(p);
  CHECK(contains(text, "refused: disk-has-foreign-content: /dev/vdb"));
  CHECK(contains(text, "nothing will be written"));
  CHECK_FALSE(contains(text, "actions:"));
}

TEST_CASE("to_json: the same plan as data") {
  DiskPlan const p = decide(two_disks(ours_content("u-9")), {.mount_point = "/data"});
  auto const j = nlohmann::json::parse(to_json(p).dump());
  CHECK(j["mount_point"] == "/data");
  CHECK(j["root_disks"] == nlohmann::json::array({"vda"}));
  REQUIRE(j["candidates"].size() == 2);
  CHECK(j["candidates"][0]["excluded"].is_string());
  CHECK(j["candidates"][1]["excluded"].is_null());
  CHECK(j["candidates"][1]["classification"]["kind"] == "ours");
  CHECK(j["chosen"]["device"] == "/dev/vdb");
  CHECK(j["chosen"]["filesystem_device"] == "/dev/vdb1");
  CHECK(j["chosen"]["classification"]["fs_uuid"] == "u-9");
  REQUIRE(j["actions"].size() == 2);
  CHECK(j["actions"][0]["kind"] == "mount");
  CHECK(j["actions"][1]["kind"] == "write-fstab");
  CHECK(j["refusal"].is_null());

  auto const r = to_json(decide(two_disks(whole_fs_content("LVM2_member", "raid")), {.mount_point = "/data"}));
  CHECK(r["refusal"]["reason"] == "disk-has-foreign-content");
  CHECK(r["actions"].empty());
}
