#include "disk/disk.hpp"

#include "disk/fstab.hpp"
#include "disk/mkfs.hpp"
#include "disk/mount.hpp"
#include "disk/partition.hpp"
#include "disk/partition_node.hpp"
#include "disk/probe.hpp"

#include <spdlog/spdlog.h>

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

}  // namespace

Result<DiskOutcome> apply(DiskPlan const& plan, DiskWanted const& wanted, ProgressFn const& progress,
                          ProbeOptions const& options) {
  if (plan.refusal) return *plan.refusal;
  if (!plan.chosen) return make_error(Reason::Internal, "disk plan has neither a chosen disk nor a refusal");
  ChosenDisk const& chosen = *plan.chosen;
  DiskOutcome out{.disk = chosen.dev_path, .mount_point = plan.mount_point};
  auto const part_wait = std::chrono::duration_cast<std::chrono::milliseconds>(wanted.partition_wait);

  // Look again right before writing: the plan may be stale.
  Classification cls = classify(probe_content(chosen.dev_path));
  Classification const& was = chosen.classification;
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

  std::string node = chosen.dev_path;
  if (cls.partition != 0) {
    say(progress, "waiting for partition " + std::to_string(cls.partition) + " of " + chosen.name);
    auto n = wait_partition_node(options, chosen.name, cls.partition, part_wait);
    if (!n) return n.error();
    node = *n;
  }
  out.device = node;

  if (cls.kind == ContentKind::Ours && cls.fs_type.empty()) {
    if (auto st = expect_blank_partition(node); !st) return st.error();
    say(progress, "formatting " + node + " as ext4");
    if (auto st = make_ext4(node); !st) return st.error();
    out.formatted = true;
  }
  out.adopted = cls.kind == ContentKind::ExistingFilesystem;

  // What the filesystem node says now (its UUID is new if we just formatted).
  AreaProbe const fs = probe_superblock(node);
  if (!fs.error.empty() || fs.ambiguous || !is_adoptable_filesystem(fs.signature.type) || fs.signature.uuid.empty())
    return make_error(Reason::DiskError, node + " does not hold the expected filesystem (" +
                                             (fs.error.empty() ? (fs.ambiguous ? std::string("ambiguous probe")
                                                                               : "found \"" + fs.signature.type + "\"")
                                                               : fs.error) + ")");
  if (!cls.fs_uuid.empty() && fs.signature.uuid != cls.fs_uuid)
    return make_error(Reason::DiskError, node + " changed: UUID " + fs.signature.uuid + " instead of " + cls.fs_uuid);
  out.fs_type = fs.signature.type;
  out.uuid = fs.signature.uuid;

  say(progress, "mounting " + node + " (" + out.fs_type + ") at " + plan.mount_point);
  auto mounted = ensure_mounted(node, out.fs_type, plan.mount_point, options.mountinfo);
  if (!mounted) return mounted.error();
  out.already_mounted = *mounted;

  auto changed_fstab = ensure_fstab_entry(
      wanted.fstab_path, data_fstab_entry(out.uuid, plan.mount_point, out.fs_type, wanted.fstab_device_timeout));
  if (!changed_fstab) return changed_fstab.error();
  out.fstab_changed = *changed_fstab;
  say(progress, "data disk ready: " + node + " (" + out.fs_type + ", UUID " + out.uuid + ") at " + plan.mount_point);
  return out;
}

}  // namespace cosmicac::disk
