#include "config/scalars.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::config;
using namespace std::chrono_literals;

TEST_CASE("sizes: binary units, plain bytes") {
  CHECK(parse_size("100G").value() == 100ULL << 30);
  CHECK(parse_size("100GiB").value() == 100ULL << 30);
  CHECK(parse_size("100gb").value() == 100ULL << 30);
  CHECK(parse_size("1T").value() == 1ULL << 40);
  CHECK(parse_size("512M").value() == 512ULL << 20);
  CHECK(parse_size("4096").value() == 4096);
  CHECK(parse_size("7B").value() == 7);
  CHECK(parse_size("15E").value() == 15ULL << 60);
  CHECK_FALSE(parse_size("16E"));  // overflows 64 bits
  CHECK_FALSE(parse_size("99999999999999999999"));
  CHECK_FALSE(parse_size("1.5T"));
  CHECK_FALSE(parse_size("G"));
  CHECK_FALSE(parse_size("10 G"));
  CHECK_FALSE(parse_size("10X"));
  CHECK_FALSE(parse_size("10GiBs"));
}

TEST_CASE("durations: seconds, minutes, hours") {
  CHECK(parse_duration("60").value() == 60s);
  CHECK(parse_duration("60s").value() == 60s);
  CHECK(parse_duration("5m").value() == 300s);
  CHECK(parse_duration("2h").value() == 7200s);
  CHECK(parse_duration("0").value() == 0s);
  CHECK_FALSE(parse_duration("-1"));
  CHECK_FALSE(parse_duration("1d"));
  CHECK_FALSE(parse_duration("5 m"));
  CHECK_FALSE(parse_duration("9000h"));
  CHECK_FALSE(parse_duration(""));
}

TEST_CASE("booleans") {
  for (auto t : {"yes", "YES", "true", "True", "1"}) CHECK(parse_bool(t).value());
  for (auto f : {"no", "No", "false", "FALSE", "0"}) CHECK_FALSE(parse_bool(f).value());
  for (auto bad : {"", "on", "off", "2", "y"}) CHECK_FALSE(parse_bool(bad));
}

TEST_CASE("mount points: absolute, normalised, not a system directory") {
  CHECK(normalise_mount_point("/data").value() == "/data");
  CHECK(normalise_mount_point("//data/./models//").value() == "/data/models");
  CHECK(normalise_mount_point("/var/lib/models").value() == "/var/lib/models");
  CHECK(normalise_mount_point("/library").value() == "/library");
  CHECK(normalise_mount_point("/mnt").value() == "/mnt");
  CHECK(normalise_mount_point("data").error().message == "must be an absolute path");
  CHECK(normalise_mount_point("").error().message == "must be an absolute path");
  CHECK(normalise_mount_point("/").error().message == "must not be /");
  CHECK(normalise_mount_point("//./").error().message == "must not be /");
  CHECK(normalise_mount_point("/data/../etc").error().message == "must not contain '..'");
  CHECK(normalise_mount_point("/my data").error().message == "must not contain whitespace or control characters");
  for (auto sys : {"/etc", "/usr/", "/var", "/boot", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"})
    CHECK(normalise_mount_point(sys).error().message == "must not be a system directory");
  for (auto sys : {"/proc", "/sys", "/dev", "/run"})
    CHECK(normalise_mount_point(sys).error().message == "must not be a system directory");
  for (auto virt : {"/proc/x", "/sys/fs", "/dev/shm/x", "/run/data"})
    CHECK(normalise_mount_point(virt).error().message == "must not be inside /proc, /sys, /dev or /run");
}

TEST_CASE("container names") {
  for (auto ok : {"cosmicac-container", "a", "A.b_c-9", "0x"}) CHECK(valid_container_name(ok));
  CHECK(valid_container_name(std::string(128, 'a')));
  CHECK_FALSE(valid_container_name(std::string(129, 'a')));
  for (auto bad : {"", "-a", ".a", "_a", "a b", "a/b", "a:b", "caf\xC3\xA9"}) CHECK_FALSE(valid_container_name(bad));
}
