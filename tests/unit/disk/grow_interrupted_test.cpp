// A grow killed between libfdisk's writes: the grow runs in a child process,
// traced, and is SIGKILLed on entering its Nth write to the image (the writes
// before it done, that one not), for every N. The boot's disk step then runs on
// what each kill left (a loop device over it, as the next boot's kernel sees
// the disk): grown, ours, the ext4 clean and its files as they were. A torn
// primary GPT is repaired from its backup only when that table is provably
// ours; a foreign table with a valid backup, or both headers torn, is refused
// with nothing written.
#include "disk/decide.hpp"
#include "disk/describe.hpp"
#include "disk/discover.hpp"
#include "disk/disk.hpp"
#include "disk/grow_partition.hpp"
#include "disk/partition.hpp"
#include "disk/probe.hpp"

#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <map>

using namespace cosmicac;
using namespace cosmicac::disk;
using namespace cosmicac::disk::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

bool can_resize_online() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0) return ((std::stoull(line.substr(7), nullptr, 16) >> 24) & 1) != 0;
  return false;
}

bool is_write(std::uint64_t nr) {
  return nr == SYS_write || nr == SYS_pwrite64 || nr == SYS_writev || nr == SYS_pwritev || nr == SYS_pwritev2;
}

// Whether the traced process's descriptor `fd` is the file `path`.
bool fd_is(pid_t pid, std::uint64_t fd, std::string const& path) {
  std::error_code ec;
  auto const target = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec);
  return !ec && target == std::filesystem::canonical(path);
}

// grow_partition(img, 1) in a traced child, SIGKILLed on entering its
// `kill_at`-th write to `img` (1-based). Returns the writes to `img` it
// entered: `kill_at` when killed, all of them when it ran to its end.
int grow_killed_at_write(std::string const& img, int kill_at) {
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    ::raise(SIGSTOP);
    ::_exit(grow_partition(img, 1) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSTOPPED(status));
  REQUIRE(::ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL) == 0);
  int writes = 0;
  int pass_signal = 0;
  while (true) {
    REQUIRE(::ptrace(PTRACE_SYSCALL, pid, nullptr, pass_signal) == 0);
    pass_signal = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status)) {
      CHECK(WEXITSTATUS(status) == 0);  // the grow itself succeeded
      return writes;
    }
    REQUIRE(WIFSTOPPED(status));
    if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
      pass_signal = WSTOPSIG(status);
      continue;
    }
    __ptrace_syscall_info info{};
    REQUIRE(::ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) > 0);
    if (info.op != PTRACE_SYSCALL_INFO_ENTRY || !is_write(info.entry.nr) || !fd_is(pid, info.entry.args[0], img))
      continue;
    if (++writes < kill_at) continue;
    REQUIRE(::kill(pid, SIGKILL) == 0);
    do REQUIRE(::waitpid(pid, &status, 0) == pid);
    while (!WIFSIGNALED(status) && !WIFEXITED(status));
    CHECK(WIFSIGNALED(status));
    return writes;
  }
}

// Our partition holding our ext4 (labelled as we label it) with `files` in
// it, in an image of `bytes`; the partition image made beside it and copied in.
std::string our_disk_with_files(TempDir const& dir, std::uint64_t bytes,
                                std::map<std::string, std::string> const& files) {
  auto img = make_sparse(dir / "base.img", bytes);
  REQUIRE(create_data_partition(img));
  auto const facts = probe_content(img);
  REQUIRE(facts.partitions.size() == 1);
  std::string const src = dir / "files";
  std::filesystem::create_directories(src);
  for (auto const& [name, content] : files) std::ofstream(src + "/" + name, std::ios::binary) << content;
  auto part = make_sparse(dir / "part.img", facts.partitions[0].size_bytes);
  run_ok("mkfs.ext4", {"-q", "-F", "-L", kFilesystemLabel, "-d", src, part});
  run_ok("dd", {"if=" + part, "of=" + img, "bs=1M", "seek=1", "conv=notrunc,sparse", "status=none"});
  return img;
}

std::string copy_of(std::string const& from, std::string const& to) {
  run_ok("cp", {"--sparse=always", from, to});
  return to;
}

// The system's facts with `dev_path` as the only candidate disk.
SystemFacts facts_with(std::string const& dev_path, std::string const& name) {
  auto f = probe_system({.probe_content = false});
  REQUIRE(f);
  SystemFacts out = *f;
  out.disks.clear();
  DiskFacts d;
  for (auto const& e : f->disks)
    if (e.name == name) d = e;
  d.name = name;
  d.dev_path = dev_path;
  d.not_candidate.clear();
  probe_disk(d);
  if (d.size_bytes == 0) d.size_bytes = std::filesystem::file_size(dev_path);  // an image file
  out.disks.push_back(d);
  return out;
}

struct Unmount {
  std::string path;
  ~Unmount() { ::umount2(path.c_str(), 0); }
};

// The boot's disk step on `img` (a loop device over it, its table read by the
// kernel as at boot): decide, apply; then the table grown and sound, the
// filesystem ours with its files, e2fsck clean.
void boot_disk_step_recovers(TempDir const& dir, std::string const& img,
                             std::map<std::string, std::string> const& files, std::uint64_t grown_bytes) {
  LoopDevice loop(img, /*partscan=*/true);
  std::string const mnt = dir / "mnt";
  DiskWanted const wanted{.mount_point = mnt, .min_bytes = 1, .partition_wait = 10s, .fstab_path = dir / "fstab"};
  DiskPlan const p = decide(facts_with(loop.path(), loop.name()), wanted);
  INFO(describe(p));
  REQUIRE_FALSE(p.refusal);
  REQUIRE(p.chosen);
  CHECK(p.chosen->classification.kind == ContentKind::Ours);
  REQUIRE(p.growth);
  auto out = apply(p, wanted);
  Unmount guard{mnt};
  auto const kernel = kernel_partitions({}, loop.name());
  REQUIRE(kernel.size() == 1);
  CHECK(kernel[0].size_bytes == grown_bytes);
  if (can_resize_online()) {
    INFO((out ? std::string() : out.error().message));
    REQUIRE(out);
    CHECK(out->grown.find("grew " + mnt + " from ") == 0);
  } else {
    WARN("no CAP_SYS_RESOURCE here: resize2fs cannot grow a mounted filesystem; the table is checked");
    REQUIRE_FALSE(out);
    CHECK(out.error().message.find("resize2fs exited 1") != std::string::npos);
  }
  for (auto const& [name, content] : files) {
    std::ifstream in(mnt + "/" + name, std::ios::binary);
    std::string const got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(got == content);
  }
  REQUIRE(::umount2(mnt.c_str(), 0) == 0);
  run_ok("e2fsck", {"-fn", kernel[0].dev_path});
  auto const after = probe_content(loop.path());
  CHECK_FALSE(after.table_from_backup);
  REQUIRE(after.partitions.size() == 1);
  CHECK(after.partitions[0].size_bytes == grown_bytes);
  CHECK(classify(after).kind == ContentKind::Ours);
  run_ok("sfdisk", {"--verify", loop.path()});
}

// Flips one byte of `path` at `offset`.
void flip_byte(std::string const& path, std::uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  in.get(c);
  write_at(path, offset, std::string(1, static_cast<char>(c ^ 0x5a)));
}

// The disk step refuses `img` as foreign and writes nothing.
void refused_untouched(std::string const& img, std::string const& why) {
  auto const c = classify(probe_content(img));
  INFO(c.summary);
  CHECK(c.kind == ContentKind::Foreign);
  CHECK(c.summary.find(why) != std::string::npos);
  std::string const hash = content_hash(img);
  TempDir dir;
  DiskWanted const wanted{.mount_point = dir / "mnt", .min_bytes = 1, .fstab_path = dir / "fstab"};
  DiskPlan const p = decide(facts_with(img, "torn-test"), wanted);
  REQUIRE(p.refusal);
  CHECK(p.refusal->reason == Reason::DiskHasForeignContent);
  CHECK_FALSE(apply(p, wanted));
  CHECK(content_hash(img) == hash);
}

}  // namespace

TEST_CASE("a grow killed at each of libfdisk's writes: the next boot's disk step grows it, ours, files intact") {
  TempDir dir;
  std::map<std::string, std::string> const files{{"kept", "the data\n"},
                                                 {"big", std::string(3 * MiB, 'x') + "end"},
                                                 {"bin", std::string("\0\1\2\3", 4)}};
  auto const base = our_disk_with_files(dir, 64 * MiB, files);
  REQUIRE(::truncate(base.c_str(), static_cast<off_t>(256 * MiB)) == 0);  // the PVC grew
  std::uint64_t const grown = 254 * MiB;  // 1 MiB .. the last usable sector, aligned down

  // How many writes a grow makes: libfdisk's backup entries, backup header,
  // primary entries, primary header, protective MBR.
  int const writes = grow_killed_at_write(copy_of(base, dir / "whole.img"), INT_MAX);
  CHECK(writes == 5);
  REQUIRE(writes >= 4);
  bool torn_seen = false;
  for (int k = 1; k <= writes; ++k) {
    INFO("killed on entering write " << k << " of " << writes);
    auto const img = copy_of(base, dir / ("killed-" + std::to_string(k) + ".img"));
    REQUIRE(grow_killed_at_write(img, k) == k);
    auto const cls = classify(probe_content(img));
    INFO(cls.summary);
    CHECK(cls.kind == ContentKind::Ours);
    // After the primary entries, before the primary header: the torn one.
    CHECK(cls.table_from_backup == (k == 4));
    torn_seen = torn_seen || cls.table_from_backup;
    boot_disk_step_recovers(dir, img, files, grown);
    std::filesystem::remove(img);
  }
  CHECK(torn_seen);
}

TEST_CASE(
    "a torn primary is repaired only for our table: not for another name, type, content or disk GUID, nor "
    "with both headers torn") {
  TempDir dir;
  std::map<std::string, std::string> const files{{"kept", "the data\n"}};
  auto const ours = our_disk_with_files(dir, 64 * MiB, files);
  std::uint64_t const primary_entries = 2 * 512;
  std::uint64_t const backup_entries = 64 * MiB - 33 * 512;

  // Ours, its primary entries torn (as a kill leaves it): ours, from the backup.
  auto const torn = copy_of(ours, dir / "torn.img");
  flip_byte(torn, primary_entries + 56);  // a byte of the partition's name, in the primary only
  auto const facts = probe_content(torn);
  CHECK(facts.table_from_backup);
  CHECK(facts.primary_torn);
  CHECK(classify(facts).kind == ContentKind::Ours);
  CHECK(classify(facts).table_from_backup);

  // The same, its primary header naming another disk GUID: not the same table.
  auto const other_guid = copy_of(torn, dir / "other-guid.img");
  flip_byte(other_guid, 512 + 56);
  refused_untouched(other_guid, "primary header is missing or damaged");

  // Both headers' entries torn: no table at all.
  auto const both = copy_of(torn, dir / "both.img");
  flip_byte(both, backup_entries + 56);
  refused_untouched(both, "");

  // Another table with a valid backup: named otherwise, typed otherwise, two partitions.
  for (auto const& [what, script] : std::map<
           std::string,
           std::string>{{"named", "label: gpt\nstart=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=primary\n"},
                        {"typed",
                         "label: gpt\nstart=2048, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, name=cosmicac-data\n"},
                        {"two", "label: gpt\nstart=2048, size=40MiB, name=cosmicac-data\nsize=10MiB\n"}}) {
    INFO("a foreign table, " << what << ", its primary torn");
    auto const img = copy_of(ours, dir / (what + ".img"));
    run_ok("sfdisk", {"--quiet", "--no-reread", img}, script);  // the ext4 at 1 MiB stays
    flip_byte(img, primary_entries + 56);
    REQUIRE(probe_content(img).primary_torn);
    refused_untouched(img, "primary header is missing or damaged");
  }

  // Ours by name and type, but no ext4 of ours in it: a grow never tears that.
  auto const empty = make_sparse(dir / "empty.img", 64 * MiB);
  REQUIRE(create_data_partition(empty));
  flip_byte(empty, primary_entries + 56);
  REQUIRE(probe_content(empty).primary_torn);
  refused_untouched(empty, "primary header is missing or damaged");
}
