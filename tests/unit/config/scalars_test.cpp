#include "config/scalars.hpp"

#include "proptest_seed.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <string>

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

TEST_CASE("mount points: an allow-list of data places, normalised") {
  CHECK(normalise_mount_point("/data").value() == "/data");
  CHECK(normalise_mount_point("/models").value() == "/models");
  CHECK(normalise_mount_point("/scratch/").value() == "/scratch");
  CHECK(normalise_mount_point("//data/./models//").value() == "/data/models");
  CHECK(normalise_mount_point("/mnt/models").value() == "/mnt/models");
  CHECK(normalise_mount_point("/srv/llm-weights_v2.1").value() == "/srv/llm-weights_v2.1");
  CHECK(normalise_mount_point("/mnt/" + std::string(64, 'm')).value() == "/mnt/" + std::string(64, 'm'));
  CHECK(normalise_mount_point("data").error().message == "must be an absolute path");
  CHECK(normalise_mount_point("").error().message == "must be an absolute path");
  CHECK(normalise_mount_point("/").error().message == "must not be /");
  CHECK(normalise_mount_point("//./").error().message == "must not be /");
  CHECK(normalise_mount_point("/data/../etc").error().message == "must not contain '..'");
  CHECK(normalise_mount_point("/my data").error().message == "must not contain whitespace or control characters");
  std::string const rule =
      "must be /data, /models or /scratch, or one name below them or below /mnt or /srv "
      "(letters, digits, '.', '_', '-'; at most 64 characters)";
  for (auto other : {"/mnt", "/srv", "/mnt/a/b", "/data/a/b", "/Data", "/library", "/var/lib/models", "/home/u",
                     "/opt/x", "/tmp/x", "/media/x", "/mnt/-x", "/mnt/.hidden", "/mnt/a:b", "/mnt/caf\xC3\xA9"})
    CHECK(normalise_mount_point(other).error().message == rule);
  CHECK(normalise_mount_point("/mnt/" + std::string(65, 'm')).error().message == rule);
  for (auto own : {"/mnt/registrycred", "/mnt/bootstrap", "/srv/Bootstrap", "/mnt/cosmicac", "/mnt/cosmicac-cd",
                   "/srv/COSMICAC_x"})
    CHECK(normalise_mount_point(own).error().message == "names a directory the guest mounts for itself");
}

// The attack: a data disk mounted (or bound) read-write into the container at a
// directory the system runs from or trusts makes the container root. The old
// rule refused only a few exact directories.
TEST_CASE("mount points: no system tree, nor anything inside one, is accepted") {
  for (auto sys : {"/usr/local/bin",
                   "/etc/cron.d",
                   "/etc/systemd/system",
                   "/root/.ssh",
                   "/var/lib/docker",
                   "/etc/sudoers.d",
                   "/usr/lib/systemd/system",
                   "/etc",
                   "/usr/",
                   "/var",
                   "/boot",
                   "/bin",
                   "/sbin",
                   "/lib",
                   "/lib64",
                   "/lib32",
                   "/libx32",
                   "/proc",
                   "/sys",
                   "/dev",
                   "/run",
                   "/run/data",
                   "/dev/shm/x",
                   "/root",
                   "/home",
                   "/opt",
                   "/tmp",
                   "/var/tmp/x",
                   "/usr/local/bin/",
                   "//usr//local/./bin"})
    CHECK_FALSE(normalise_mount_point(sys));
}

namespace {
// Is `path` (normalised) the directory `tree` or inside it?
bool inside(std::string const& path, std::string_view tree) {
  return path == tree || (path.starts_with(tree) && path.size() > tree.size() && path[tree.size()] == '/');
}
}  // namespace

// Property: whatever the input, an accepted value is one of the allowed shapes,
// lies outside every tree the system runs from, trusts or mounts itself, and is
// its own normal form. Inputs are built from the path pieces an attacker would
// use (system names, dots, doubled slashes) so that many are accepted.
TEST_CASE("mount points: property: every accepted value lies outside every system tree") {
  // Trees the container must never get read-write: where the system keeps
  // programs, libraries, configuration, state, root's and users' homes, the
  // pseudo filesystems, and the runtime/temporary trees (other services' files).
  constexpr std::array<std::string_view, 22> kSystemTrees{"/etc",        "/usr",  "/var", "/root",  "/boot",
                                                          "/bin",        "/sbin", "/lib", "/lib32", "/lib64",
                                                          "/libx32",     "/proc", "/sys", "/dev",   "/run",
                                                          "/home",       "/opt",  "/tmp", "/media", "/snap",
                                                          "/lost+found", "/efi"};
  constexpr std::array<std::string_view, 22> kPieces{"data",  "models", "scratch", "mnt",    "srv",
                                                     "etc",   "usr",    "var",     "root",   "bin",
                                                     "local", "lib",    "..",      ".",      "",
                                                     "x",     "cron.d", ".ssh",    "docker", "registrycred",
                                                     "a-b.c", "run"};
  std::mt19937_64 rng(proptest_seed());
  INFO("seed " << proptest_seed());
  std::size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string in;
    std::size_t const n = 1 + rng() % 4;
    for (std::size_t k = 0; k < n; ++k) {
      in += std::string(1 + rng() % 2, '/');
      in += kPieces[rng() % kPieces.size()];
    }
    if (rng() % 4 == 0) in += '/';
    auto r = normalise_mount_point(in);
    if (!r) continue;
    ++accepted;
    std::string const& out = *r;
    INFO(in << " -> " << out);
    for (auto tree : kSystemTrees) CHECK_FALSE(inside(out, tree));
    bool const shape = out == "/data" || out == "/models" || out == "/scratch" || inside(out, "/data") ||
                       inside(out, "/models") || inside(out, "/scratch") || inside(out, "/mnt") || inside(out, "/srv");
    CHECK(shape);
    CHECK(std::count(out.begin(), out.end(), '/') <= 2);
    CHECK(out.find("..") == std::string::npos);
    CHECK(normalise_mount_point(out).value() == out);
  }
  CHECK(accepted > 100);  // the generator does reach the accepted shapes
}

TEST_CASE("container names") {
  for (auto ok : {"cosmicac-container", "a", "A.b_c-9", "0x"}) CHECK(valid_container_name(ok));
  CHECK(valid_container_name(std::string(128, 'a')));
  CHECK_FALSE(valid_container_name(std::string(129, 'a')));
  for (auto bad : {"", "-a", ".a", "_a", "a b", "a/b", "a:b", "caf\xC3\xA9"}) CHECK_FALSE(valid_container_name(bad));
}
