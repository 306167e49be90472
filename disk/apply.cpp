#include "disk/disk.hpp"

#include "disk/ext4_superblock.hpp"
#include "disk/ext4_tools.hpp"
#include "disk/fstab.hpp"
#include "disk/grow_partition.hpp"
#include "disk/layout.hpp"
#include "disk/mount.hpp"
#include "disk/partition.hpp"
#include "disk/partition_node.hpp"
#include "disk/probe.hpp"

#include "common/file_io.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace cosmicac::disk {

namespace {

void say(ProgressFn const& progress, std::string const& msg) {
  spdlog::info("{}", msg);
  if (progress) progress(msg);
}

Error changed(std::string const& disk, Classification const& was, Classification const& now) {
  Reason const r = now.kind == ContentKind::Foreign ? Reason::DiskHasForeignContent : Reason::DiskError;
  return make_error(r, disk + " changed since it was planned: it held " + was.summary + ", now " + now.summary +
                           "; nothing written");
}

// The partition's node, opened and kept open until the filesystem is mounted.
// Right after partitioning, udev's re-read of the table can drop and re-add
// the node (seen in the VM: "vdb: vdb1" twice, the node gone in between); the
// kernel does not re-read a table while one of its partitions is open, so the
// open fd holds it steady for the probe, mkfs and mount.
Result<std::pair<std::string, UniqueFd>> hold_partition(ProbeOptions const& options, std::string const& disk,
                                                        int number, std::chrono::milliseconds timeout) {
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto const left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto node = wait_partition_node(options, disk, number, std::max(left, std::chrono::milliseconds(0)));
    if (!node) return node.error();
    UniqueFd fd(::open(node->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.valid()) return std::pair{*node, std::move(fd)};
    if ((errno != ENOENT && errno != ENXIO) || std::chrono::steady_clock::now() >= deadline)
      return make_error(Reason::DiskError, "cannot open " + *node + ": " + std::string(std::strerror(errno)));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the node is being re-created
  }
}

// The partition node must hold exactly what we expect before we write to it.
Status expect_blank_partition(std::string const& node) {
  AreaProbe const p = probe_superblock(node);
  if (!p.error.empty()) return make_error(Reason::DiskHasForeignContent, node + ": " + p.error + "; not formatting it");
  if (p.ambiguous) return make_error(Reason::DiskHasForeignContent, node + ": ambiguous probe; not formatting it");
  if (!p.signature.type.empty())
    return make_error(Reason::DiskHasForeignContent,
                      node + " holds a " + p.signature.type + " signature; not formatting it");
  return ok();
}

// The earlier layout: the filesystem itself at the mount point, in fstab.
Status mount_directly(std::string const& node, std::string const& mount_point, DiskWanted const& wanted,
                      ProbeOptions const& options, ProgressFn const& progress, DiskOutcome& out) {
  say(progress, "mounting " + node + " (" + out.fs_type + ") at " + mount_point);
  auto mounted = ensure_mounted(node, out.fs_type, mount_point, options.mountinfo);
  if (!mounted) return mounted.error();
  out.already_mounted = *mounted;
  auto changed_fstab = ensure_fstab_entry(wanted.fstab_path, data_fstab_entry(out.uuid, mount_point, out.fs_type,
                                                                              wanted.fstab_device_timeout));
  if (!changed_fstab) return changed_fstab.error();
  out.fstab_changed = *changed_fstab;
  return ok();
}

FstabEntry bind_fstab_entry(std::string const& source, std::string const& target, std::string const& data_root) {
  // nofail: a missing data disk must not stop the boot; requires-mounts-for:
  // never bind the empty directory underneath. nosuid,nodev on both binds (a
  // bind copies its source's flags anyway; said here so that no reader has to
  // know it). mnt/ is the container's. The store over /var/lib/docker too: a
  // container's root filesystem is dockerd's overlay mount, and the kernel
  // checks nosuid/nodev on the mount a program or device is opened through,
  // the overlay's own, not on the mount its layers sit on (setuid programs and
  // device nodes of an image keep working: tests/unit/disk/apply_test.cpp
  // checks it on the test kernel). What a nosuid store does cost: setuid
  // programs inside a docker volume (bind-mounted from the store; the agent's
  // container has none of its own making), and the vfs storage driver, whose
  // root filesystems are plain directories of the store.
  return {.source = source,
          .target = target,
          .fstype = "none",
          .options = "bind,nosuid,nodev,nofail,x-systemd.requires-mounts-for=" + data_root,
          .freq = 0,
          .passno = 0};
}

// The laid-out filesystem, mounted at data_root: completes its layout, binds
// its mnt/ at the mount point and writes the fstab lines for the next boot.
// `mounted_before`: data_root was mounted before this run.
Status bind_store_layout(std::string const& mount_point, DiskWanted const& wanted, ProbeOptions const& options,
                         ProgressFn const& progress, bool mounted_before, DiskOutcome& out) {
  // Also for a layout already marked: completes one a crash interrupted (writes nothing otherwise).
  if (auto c = create_store_layout(wanted.data_root); !c) return c.error();
  std::string const data_dir = wanted.data_root + "/" + kContainerDir;
  say(progress, "binding " + data_dir + " at " + mount_point);
  auto bound =
      ensure_bind_mounted(data_dir, mount_point, out.devno, std::string("/") + kContainerDir, options.mountinfo);
  if (!bound) return bound.error();
  out.already_mounted = mounted_before && *bound;
  out.data_root = wanted.data_root;
  out.docker_store = wanted.data_root + "/" + kDockerDir;

  // fstab: the filesystem at data_root (replacing an earlier line for the same
  // UUID, or this line as an earlier version wrote it), then the two binds, so
  // that the next boot has them before docker.
  bool changed = false;
  for (auto const& e : {data_fstab_entry(out.uuid, wanted.data_root, out.fs_type, wanted.fstab_device_timeout),
                        bind_fstab_entry(data_dir, mount_point, wanted.data_root),
                        bind_fstab_entry(out.docker_store, kDockerStoreTarget, wanted.data_root)}) {
    auto c = ensure_fstab_entry(wanted.fstab_path, e);
    if (!c) return c.error();
    changed = changed || *c;
  }
  out.fstab_changed = changed;
  return ok();
}

// Mounts the filesystem where its layout says (disk/layout.hpp): a filesystem
// an earlier version made or one we adopted keeps its files at its root and is
// mounted directly at the mount point, as before (docker's store then stays on
// the root disk, and the note says so); ours, empty or laid out, goes to
// data_root with mnt/ bound at the mount point. Nothing is moved.
Status place_filesystem(std::string const& node, std::string const& mount_point, DiskWanted const& wanted,
                        ProbeOptions const& options, ProgressFn const& progress, DiskOutcome& out) {
  struct stat st {};
  if (::stat(node.c_str(), &st) != 0) return make_error(Reason::DiskError, "cannot stat " + node);
  out.devno = st.st_rdev;
  auto keep_earlier = [&](std::string why) -> Status {
    out.layout_note = std::move(why) + ": docker's image store stays on the root disk (a re-created VM pulls again)";
    spdlog::warn("{}", out.layout_note);
    return mount_directly(node, mount_point, wanted, options, progress, out);
  };
  if (wanted.data_root.empty()) return mount_directly(node, mount_point, wanted, options, progress, out);
  if (out.adopted)
    return keep_earlier(node + " holds a filesystem cosmicac did not make, mounted at " + mount_point + " as it is");
  auto at_mp = mounted_at(mount_point, options.mountinfo);
  if (!at_mp) return at_mp.error();
  if (*at_mp && (*at_mp)->devno == out.devno && (*at_mp)->root == "/")
    return keep_earlier(node + " is mounted directly at " + mount_point + " (the layout of earlier versions)");

  say(progress, "mounting " + node + " (" + out.fs_type + ") at " + wanted.data_root);
  auto mounted = ensure_mounted(node, out.fs_type, wanted.data_root, options.mountinfo);
  if (!mounted) return mounted.error();
  auto content = read_root_content(wanted.data_root);
  if (!content) return content.error();
  auto put_back = [&]() -> Status {
    if (*mounted) return ok();
    return unmount(wanted.data_root);
  };
  if (*content == RootContent::UnmarkedLayout) {
    // The marker file without the attribute: the previous version laid it out
    // (it wrote only the file), or a container of an earlier-layout VM, which
    // had this root as its MNT, wrote the file and a docker/ tree for the next
    // VM's dockerd to restore. The file cannot tell them apart; this root
    // disk's fstab can: only an agent that accepted the layout on this root
    // disk mounts the filesystem at the data root. Anything else is treated
    // as an earlier layout, never migrated.
    auto recorded = fstab_has_line(wanted.fstab_path, "UUID=" + out.uuid, wanted.data_root);
    if (!recorded) return recorded.error();
    if (!*recorded) {
      if (auto u = put_back(); !u) return u.error();
      return keep_earlier(node + " holds " + kLayoutMarker + " without the " + kLayoutAttribute + " attribute, and " +
                          wanted.fstab_path + " never mounted it at " + wanted.data_root +
                          ": not trusted (a container of an earlier-layout VM can write that file), mounted at " +
                          mount_point + " as it is, nothing moved");
    }
    say(progress, "accepting the layout of " + wanted.data_root + " (made on this root disk by the previous version)");
    if (auto m = mark_store_layout(wanted.data_root); !m) return m.error();
    *content = RootContent::StoreLayout;
  }
  if (*content == RootContent::Files) {
    if (auto u = put_back(); !u) return u.error();
    return keep_earlier(node + " holds files at its root (made by an earlier version): mounted at " + mount_point +
                        " as before, nothing moved");
  }
  if (*content == RootContent::Empty)
    say(progress, "laying out " + wanted.data_root + ": " + kContainerDir + "/ for " + mount_point + ", " + kDockerDir +
                      "/ for docker's image store");
  return bind_store_layout(mount_point, wanted, options, progress, *mounted, out);
}

// The table part of a growth, before the mount (and before the partition's
// node is waited for): libfdisk looks again and refuses what is not ours
// (grow_partition; a table read from its backup is written whole, its
// primary anew), or only the kernel is told the size a table written earlier
// this boot says.
Status grow_table(ChosenDisk const& chosen, GrowthPlan const& g, ProgressFn const& progress) {
  if (g.write_table) {
    say(progress, "growing the GPT of " + chosen.dev_path + " (" + format_size(g.disk_bytes) + "): partition " +
                      std::to_string(g.partition) + " from " + format_size(g.partition_from) + " to " +
                      format_size(g.partition_to));
    auto done = grow_partition(chosen.dev_path, g.partition);
    if (!done) return done.error();
    return ok();
  }
  if (!g.tell_kernel) return ok();
  say(progress, "telling the kernel that partition " + std::to_string(g.partition) + " of " + chosen.dev_path +
                    " now has " + format_size(g.partition_to));
  return set_kernel_partition_size(chosen.dev_path, g.partition, g.partition_start, g.partition_to);
}

// What the filesystem node says now (its UUID is new if we just formatted).
Status read_filesystem(std::string const& node, Classification const& cls, DiskOutcome& out) {
  AreaProbe const fs = probe_superblock(node);
  if (!fs.error.empty() || fs.ambiguous || !is_adoptable_filesystem(fs.signature.type) || fs.signature.uuid.empty())
    return make_error(Reason::DiskError, node + " does not hold the expected filesystem (" +
                                             (fs.error.empty() ? (fs.ambiguous ? std::string("ambiguous probe")
                                                                               : "found \"" + fs.signature.type + "\"")
                                                               : fs.error) +
                                             ")");
  if (!cls.fs_uuid.empty() && fs.signature.uuid != cls.fs_uuid)
    return make_error(Reason::DiskError, node + " changed: UUID " + fs.signature.uuid + " instead of " + cls.fs_uuid);
  out.fs_type = fs.signature.type;
  out.uuid = fs.signature.uuid;
  return ok();
}

// The writes the plan calls for, on a fresh look at the disk: partition if
// blank, a growth's table, format our empty partition, then read the
// filesystem's type and UUID from its node. The new partition's node stays open in `partition_fd` (see
// hold_partition) until the caller has mounted it.
Status prepare_filesystem(ChosenDisk const& chosen, std::optional<GrowthPlan> const& growth, DiskWanted const& wanted,
                          ProgressFn const& progress, ProbeOptions const& options, DiskOutcome& out,
                          UniqueFd& partition_fd) {
  Classification const& was = chosen.classification;
  // Look again right before writing: the plan may be stale.
  Classification cls = classify(probe_content(chosen.dev_path));
  if (cls.kind != was.kind || cls.partition != was.partition || cls.fs_uuid != was.fs_uuid)
    return changed(chosen.dev_path, was, cls);

  if (cls.kind == ContentKind::Blank) {
    say(progress, "partitioning " + chosen.dev_path + " (GPT, one " + kPartitionName + " partition)");
    if (auto st = create_data_partition(chosen.dev_path); !st) return st.error();
    out.partitioned = true;
    cls = classify(probe_content(chosen.dev_path));
    if (cls.kind != ContentKind::Ours || !cls.fs_type.empty())
      return make_error(Reason::DiskError, "after partitioning, " + chosen.dev_path + " holds " + cls.summary +
                                               " instead of our empty partition");
  }

  // A growth's table before the partition's node is waited for: one read
  // from its backup (a torn primary) is a table the kernel did not find.
  if (growth)
    if (auto st = grow_table(chosen, *growth, progress); !st) return st.error();

  std::string node = chosen.dev_path;
  if (cls.partition != 0) {
    say(progress, "waiting for partition " + std::to_string(cls.partition) + " of " + chosen.name);
    auto const part_wait = std::chrono::duration_cast<std::chrono::milliseconds>(wanted.partition_wait);
    auto held = hold_partition(options, chosen.name, cls.partition, part_wait);
    if (!held) return held.error();
    node = held->first;
    partition_fd = std::move(held->second);
  }
  out.device = node;

  if (cls.kind == ContentKind::Ours && cls.fs_type.empty()) {
    if (auto st = expect_blank_partition(node); !st) return st.error();
    say(progress, "formatting " + node + " as ext4");
    if (auto st = make_ext4(node); !st) return st.error();
    out.formatted = true;
  }
  out.adopted = cls.kind == ContentKind::ExistingFilesystem;
  return read_filesystem(node, cls, out);
}

// The filesystem part, once it is mounted: its superblock read again right
// before (errors refuse), resize2fs, then the size it has now.
Status grow_filesystem(std::string const& node, std::string const& mount_point, ProgressFn const& progress,
                       DiskOutcome& out) {
  auto before = read_ext4_superblock(node);
  if (!before) return make_error(Reason::DiskGrow, "not growing " + node + ": " + before.error().message);
  if (auto errors = ext4_recorded_errors(*before); !errors.empty())
    return make_error(Reason::DiskGrow, "not growing the ext4 on " + node + ": " + errors);
  say(progress, "growing the ext4 on " + node + " (at " + mount_point + ", " + format_size(before->size_bytes()) +
                    ") online to its partition's size");
  if (auto st = grow_ext4(node); !st) return st;
  auto after = read_ext4_superblock(node);
  if (!after) return make_error(Reason::DiskGrow, "after growing " + node + ": " + after.error().message);
  out.grown =
      "grew " + mount_point + " from " + format_size(before->size_bytes()) + " to " + format_size(after->size_bytes());
  say(progress, out.grown);
  return ok();
}

}  // namespace

Result<DiskOutcome> apply(DiskPlan const& plan, DiskWanted const& wanted, ProgressFn const& progress,
                          ProbeOptions const& options) {
  if (plan.refusal) return *plan.refusal;
  if (!plan.chosen) return make_error(Reason::Internal, "disk plan has neither a chosen disk nor a refusal");
  ChosenDisk const& chosen = *plan.chosen;
  Classification const& was = chosen.classification;
  DiskOutcome out{.disk = chosen.dev_path, .mount_point = plan.mount_point};

  // Our filesystem, already mounted where it belongs (every boot after the
  // first): nothing will be written to the disk, so there is nothing to look
  // at again. The re-probe, the partition wait and the superblock probe cost
  // a second or more under emulation on the second boot's critical path
  // (dockerd waits for the disk unit); the plan's probe, a moment ago, is
  // what the kernel mounted.
  bool const as_mounted = was.kind == ContentKind::Ours && !was.fs_type.empty() && !was.fs_uuid.empty() &&
                          chosen.already_mounted && !chosen.device.empty();
  UniqueFd partition_fd;  // see hold_partition: open until apply returns
  if (as_mounted) {
    out.device = chosen.device;
    out.fs_type = was.fs_type;
    out.uuid = was.fs_uuid;
    if (plan.growth)
      if (auto st = grow_table(chosen, *plan.growth, progress); !st) return st.error();
  } else if (auto st = prepare_filesystem(chosen, plan.growth, wanted, progress, options, out, partition_fd); !st) {
    return st.error();
  }
  if (auto st = place_filesystem(out.device, plan.mount_point, wanted, options, progress, out); !st) return st.error();
  if (plan.growth && plan.growth->grow_filesystem)
    if (auto st = grow_filesystem(out.device, plan.mount_point, progress, out); !st) return st.error();
  say(progress, "data disk ready: " + out.device + " (" + out.fs_type + ", UUID " + out.uuid + ") at " +
                    plan.mount_point + (as_mounted ? ", as mounted" : ""));
  return out;
}

}  // namespace cosmicac::disk
