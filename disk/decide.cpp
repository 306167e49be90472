#include "disk/decide.hpp"

#include "common/file_io.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace cosmicac::disk {

namespace {

std::string join(std::vector<std::string> const& v, std::string_view sep = ", ") {
  std::string out;
  for (auto const& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

DiskPlan refuse(DiskPlan plan, Reason reason, std::string message) {
  plan.refusal = make_error(reason, std::move(message));
  plan.actions.clear();
  return plan;
}

std::string partition_device(DiskFacts const& d, int number) {
  if (number == 0) return d.dev_path;
  for (auto const& p : d.kernel_partitions)
    if (p.number == number) return p.dev_path;
  return {};
}

// Kernel names of the disk and of its partition `number` (0: the disk).
std::string partition_name(DiskFacts const& d, int number) {
  if (number == 0) return d.name;
  for (auto const& p : d.kernel_partitions)
    if (p.number == number) return p.name;
  return {};
}

}  // namespace

std::string_view action_kind_name(ActionKind kind) noexcept {
  switch (kind) {
    case ActionKind::CreatePartitionTable: return "create-partition-table";
    case ActionKind::MakeFilesystem: return "make-filesystem";
    case ActionKind::Mount: return "mount";
    case ActionKind::WriteFstab: return "write-fstab";
    case ActionKind::GrowPartition: return "grow-partition";
    case ActionKind::GrowFilesystem: return "grow-filesystem";
  }
  return "unknown";
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), kUnits[u]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::vector<std::string> backing_disks(SystemFacts const& facts, std::string const& device) {
  std::map<std::string, std::vector<std::string> const*> parents;
  for (auto const& n : facts.graph) parents[n.name] = &n.parents;
  std::set<std::string> disk_names;
  for (auto const& d : facts.disks) disk_names.insert(d.name);

  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> todo{device};
  while (!todo.empty()) {
    std::string const cur = todo.back();
    todo.pop_back();
    if (cur.empty() || !seen.insert(cur).second) continue;
    auto const it = parents.find(cur);
    bool const leaf = it == parents.end() || it->second->empty();
    // Physical disks are the leaves: dm/md devices are listed as (virtual) disks too.
    if (leaf && disk_names.count(cur) && std::find(out.begin(), out.end(), cur) == out.end()) out.push_back(cur);
    if (!leaf)
      for (auto const& p : *it->second) todo.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Disks in use: the root filesystem's, then any other mounted filesystem's
// (except whatever is already at our mount point or data root: that may be
// our own disk, and then so are its bind mounts, MNT and the docker store).
// Fills plan.root and plan.root_disks; returns disk → why it is in use.
std::map<std::string, std::string> disks_in_use(SystemFacts const& facts, DiskWanted const& wanted, DiskPlan& plan) {
  std::set<std::string> ours;  // devices mounted at our own places
  for (auto const& m : facts.mounts)
    if (m.target == wanted.mount_point || (!wanted.data_root.empty() && m.target == wanted.data_root))
      ours.insert(m.device);
  std::map<std::string, std::string> in_use;
  auto const root =
      std::find_if(facts.mounts.begin(), facts.mounts.end(), [](auto const& m) { return m.target == "/"; });
  if (root == facts.mounts.end()) {
    plan.root = "/ not found in mountinfo";
  } else if (root->device.empty()) {
    plan.root = "/ is " + root->source + ", not on a block device";
  } else {
    plan.root_disks = backing_disks(facts, root->device);
    plan.root = "/ on " + root->device + " (" + root->source + "), backed by " +
                (plan.root_disks.empty() ? std::string("no whole disk found") : join(plan.root_disks));
    for (auto const& d : plan.root_disks) in_use[d] = "backs the root filesystem (/ on " + root->source + ")";
  }
  for (auto const& m : facts.mounts) {
    if (m.device.empty() || m.target == "/" || ours.count(m.device)) continue;
    for (auto const& d : backing_disks(facts, m.device))
      in_use.emplace(d, "in use: backs " + m.target + " (" + m.source + ")");
  }
  return in_use;
}

// One report per disk (classified when probed, with why it is excluded);
// returns the eligible ones.
std::vector<DiskFacts const*> screen_candidates(SystemFacts const& facts, DiskWanted const& wanted,
                                                std::map<std::string, std::string> const& in_use, DiskPlan& plan) {
  std::vector<DiskFacts const*> eligible;
  for (auto const& d : facts.disks) {
    CandidateReport r{.name = d.name, .dev_path = d.dev_path, .size_bytes = d.size_bytes, .serial = d.serial};
    if (d.content_probed) r.classification = classify(d.content);
    bool const ours = r.classification && r.classification->kind == ContentKind::Ours;
    if (!d.not_candidate.empty()) r.excluded = d.not_candidate;
    else if (auto u = in_use.find(d.name); u != in_use.end()) r.excluded = u->second;
    else if (!wanted.serial.empty() && d.serial != wanted.serial)
      r.excluded = "serial \"" + d.serial + "\" is not the configured \"" + wanted.serial + "\"";
    else if (!d.content_probed) r.excluded = "content not probed";
    // Our own partition wins whatever the minimum is now; a configured serial
    // names the disk outright.
    else if (wanted.serial.empty() && !ours && d.size_bytes < wanted.min_bytes)
      r.excluded = "smaller than the minimum " + format_size(wanted.min_bytes);
    if (r.excluded.empty()) eligible.push_back(&d);
    plan.candidates.push_back(std::move(r));
  }
  return eligible;
}

Classification const& classification_of(DiskPlan const& plan, DiskFacts const* d) {
  for (auto const& c : plan.candidates)
    if (c.name == d->name) return *c.classification;
  static Classification const none;
  return none;
}

std::string dev_paths(std::vector<DiskFacts const*> const& v) {
  std::vector<std::string> n;
  n.reserve(v.size());
  for (auto* d : v) n.push_back(d->dev_path);
  return join(n);
}

// Which eligible disk is the data disk: the configured serial; else the one
// carrying our partition; else the largest. Sets plan.why, or returns the
// refusal.
std::optional<Error> choose(std::vector<DiskFacts const*> const& eligible, DiskWanted const& wanted, DiskPlan& plan,
                            DiskFacts const*& chosen) {
  if (!wanted.serial.empty()) {
    if (eligible.empty()) {
      std::string msg = "no usable disk with serial \"" + wanted.serial + "\"";
      for (auto const& c : plan.candidates)
        if (c.serial == wanted.serial) msg += " (" + c.dev_path + " has it but is excluded: " + c.excluded + ")";
      return make_error(Reason::NoDataDisk, msg);
    }
    if (eligible.size() > 1)
      return make_error(Reason::NoDataDisk,
                        "several disks report serial \"" + wanted.serial + "\": " + dev_paths(eligible));
    chosen = eligible.front();
    plan.why = "its serial is \"" + wanted.serial + "\" (the configured data-disk serial)";
    return std::nullopt;
  }
  std::vector<DiskFacts const*> ours;
  for (auto* d : eligible)
    if (classification_of(plan, d).kind == ContentKind::Ours) ours.push_back(d);
  if (ours.size() > 1)
    return make_error(Reason::NoDataDisk, "several disks carry a " + std::string(kPartitionName) + " partition: " +
                                              dev_paths(ours) + "; configure the data-disk serial to choose one");
  if (ours.size() == 1) {
    chosen = ours.front();
    plan.why = "it already carries our " + std::string(kPartitionName) + " partition";
    return std::nullopt;
  }
  if (eligible.empty())
    return make_error(Reason::NoDataDisk,
                      "no disk of at least " + format_size(wanted.min_bytes) + " other than the root disk" +
                          (plan.root_disks.empty() ? std::string() : " (" + join(plan.root_disks) + ")"));
  std::uint64_t const largest = (*std::max_element(eligible.begin(), eligible.end(), [](auto* a, auto* b) {
                                  return a->size_bytes < b->size_bytes;
                                }))->size_bytes;
  std::vector<DiskFacts const*> top;
  for (auto* d : eligible)
    if (d->size_bytes == largest) top.push_back(d);
  if (top.size() > 1)
    return make_error(Reason::NoDataDisk, "cannot tell the data disk: " + dev_paths(top) + " are equally large (" +
                                              format_size(largest) + "); configure the data-disk serial to choose one");
  chosen = top.front();
  plan.why = eligible.size() == 1 ? "the only disk of at least " + format_size(wanted.min_bytes) + " that is not in use"
                                  : "the largest of " + std::to_string(eligible.size()) + " disks of at least " +
                                        format_size(wanted.min_bytes) + " that are not in use";
  return std::nullopt;
}

// What is at the mount point now: nothing, or the chosen filesystem (then
// plan.chosen->already_mounted); anything else is a refusal.
std::optional<Error> check_mount_target(SystemFacts const& facts, DiskFacts const& chosen,
                                        std::string const& mount_point, DiskPlan& plan) {
  Classification const& cls = plan.chosen->classification;
  std::string const node = cls.kind == ContentKind::Blank ? std::string() : partition_name(chosen, cls.partition);
  for (auto it = facts.mounts.rbegin(); it != facts.mounts.rend(); ++it) {
    if (it->target != mount_point) continue;
    if (!node.empty() && it->device == node) {
      plan.chosen->already_mounted = true;
      return std::nullopt;
    }
    return make_error(Reason::DiskError,
                      mount_point + " already holds " + it->source + ", not the data disk " + chosen.dev_path);
  }
  return std::nullopt;
}

// Whether our disk has grown and what growing our filesystem takes; a refusal
// (disk-grow) when it has grown but is not ours to grow. Only our partition
// with our filesystem is looked at (probe_disk); a disk that did not grow
// asks for nothing, whatever else the look says.
std::optional<Error> plan_growth(DiskFacts const& d, DiskPlan& plan) {
  if (!d.growth && plan.chosen->classification.table_from_backup)
    return make_error(Reason::DiskGrow, d.dev_path +
                                            ": its GPT's primary header is torn and its table was not looked "
                                            "at; nothing written");
  if (!d.growth) return std::nullopt;
  GrowthFacts const& g = *d.growth;
  std::string const disk = d.dev_path;
  if (!g.table_error.empty())
    return make_error(Reason::DiskGrow, "cannot tell whether " + disk + " has grown: " + g.table_error);
  PartitionGrowth const& t = g.table;
  // A table read from its backup is written whatever libfdisk's look says:
  // the primary is the one a kernel reads at boot.
  GrowthPlan p{.partition = t.number,
               .write_table = t.table_to_write() || plan.chosen->classification.table_from_backup,
               .tell_kernel = g.kernel_size_bytes != 0 && g.kernel_size_bytes < t.grown_size_bytes,
               .disk_bytes = t.disk_bytes,
               .partition_start = t.start_bytes,
               .partition_from = t.size_bytes,
               .partition_to = t.grown_size_bytes};
  bool const fs_known = g.fs_error.empty();
  p.filesystem_from = fs_known ? g.fs.size_bytes() : 0;
  p.grow_filesystem = !fs_known || p.filesystem_from + kGrowthSlack < t.grown_size_bytes;
  if (!p.write_table && !p.tell_kernel && !p.grow_filesystem) return std::nullopt;
  std::string const grown = disk + " (" + format_size(t.disk_bytes) + ") has grown";
  if (auto why = partition_growth_refusal(t); !why.empty())
    return make_error(Reason::DiskGrow, grown + " but " + why + "; nothing written");
  if (!fs_known) return make_error(Reason::DiskGrow, grown + " but " + g.fs_error + "; nothing written");
  if (auto errors = ext4_recorded_errors(g.fs); !errors.empty())
    return make_error(Reason::DiskGrow, grown + " but the filesystem on partition " + std::to_string(t.number) +
                                            " is not clean: " + errors +
                                            "; not growing it (run e2fsck -f on it unmounted); nothing written");
  plan.growth = p;
  return std::nullopt;
}

// The growth's actions: the table before the mount (the kernel is told while
// it is mounted), the filesystem after it (resize2fs grows it online).
void growth_actions(DiskPlan& plan, std::string const& part, bool before_mount) {
  if (!plan.growth) return;
  GrowthPlan const& g = *plan.growth;
  std::string const disk = plan.chosen->dev_path;
  std::string const repair = plan.chosen->classification.table_from_backup
                                 ? "write its primary header and entries anew from the backup (a write interrupted "
                                   "tore the primary), "
                                 : "";
  if (before_mount && g.write_table)
    plan.actions.push_back({ActionKind::GrowPartition,
                            "grow the GPT of " + disk + " to its new size (" + format_size(g.disk_bytes) + "): " +
                                repair + "its backup header to the end, partition " + std::to_string(g.partition) +
                                " (" + kPartitionName + ") from " + format_size(g.partition_from) + " to " +
                                format_size(g.partition_to) + ", and tell the kernel"});
  else if (before_mount && g.tell_kernel)
    plan.actions.push_back({ActionKind::GrowPartition, "tell the kernel that " + part + " now has " +
                                                           format_size(g.partition_to) + " (the GPT says so already)"});
  if (!before_mount && g.grow_filesystem)
    plan.actions.push_back({ActionKind::GrowFilesystem, "grow the ext4 on " + part + " online from " +
                                                            format_size(g.filesystem_from) + " to about " +
                                                            format_size(g.partition_to) + " (resize2fs)"});
}

// The writes, in order, for the chosen disk's class; completes plan.why.
void plan_actions(DiskWanted const& wanted, DiskPlan& plan) {
  ChosenDisk const& chosen = *plan.chosen;
  Classification const& cls = chosen.classification;
  std::string const part = chosen.device.empty() ? "the new partition " + std::string(kPartitionName) : chosen.device;
  std::string const fs = cls.fs_type.empty() ? std::string("ext4") : cls.fs_type;
  switch (cls.kind) {
    case ContentKind::Blank:
      plan.why += "; it is blank";
      plan.actions.push_back(
          {ActionKind::CreatePartitionTable, "write a GPT on " + chosen.dev_path +
                                                 " with one partition from 1 MiB to the end, named " + kPartitionName +
                                                 ", type Linux filesystem"});
      plan.actions.push_back({ActionKind::MakeFilesystem,
                              "format " + part + " as ext4 (label " + kFilesystemLabel + ", lazy init, no discard)"});
      break;
    case ContentKind::Ours:
      if (cls.fs_type.empty()) {
        plan.why += "; our partition has no filesystem yet (an earlier run stopped before formatting)";
        plan.actions.push_back({ActionKind::MakeFilesystem,
                                "format " + part + " as ext4 (label " + kFilesystemLabel + ", lazy init, no discard)"});
      } else if (plan.growth) {
        if (cls.table_from_backup) plan.why += "; its GPT's primary header is torn, its backup valid: repaired from it";
        plan.why += "; it holds our " + cls.fs_type +
                    " filesystem, and the disk has grown: " + format_size(plan.growth->filesystem_from) + " → " +
                    format_size(plan.growth->partition_to);
      } else {
        plan.why += "; it holds our " + cls.fs_type + " filesystem, used as it is";
      }
      break;
    case ContentKind::ExistingFilesystem:
      plan.why += "; it holds " + cls.summary + ", mounted as it is: never repartitioned nor reformatted";
      break;
    case ContentKind::Foreign: break;
  }
  // With a data root (disk/layout.hpp): where apply() finds the layout decides.
  std::string const where = wanted.data_root.empty()
                                ? wanted.mount_point
                                : wanted.data_root + " with its mnt/ bound at " + wanted.mount_point +
                                      " and docker/ offered for /var/lib/docker (a filesystem holding an earlier "
                                      "version's files, or adopted, is mounted at " +
                                      wanted.mount_point + " directly)";
  growth_actions(plan, part, true);
  if (chosen.already_mounted) plan.why += "; already mounted at " + wanted.mount_point;
  else
    plan.actions.push_back(
        {ActionKind::Mount, "mount " + part + " (" + fs + ") at " + where + " (created with mode 0755 if missing)"});
  growth_actions(plan, part, false);
  plan.actions.push_back({ActionKind::WriteFstab,
                          "make " + wanted.fstab_path +
                              " mount UUID=" + (cls.fs_uuid.empty() ? std::string("<new>") : cls.fs_uuid) + " at " +
                              wanted.mount_point + " (" + fs + ", defaults,nofail,x-systemd.device-timeout=" +
                              std::to_string(wanted.fstab_device_timeout.count()) + "s), replacing our earlier line"});
}

}  // namespace

// Screen the candidates, choose one, check the mount target, plan the writes.
DiskPlan decide(SystemFacts const& facts, DiskWanted const& wanted_in) {
  DiskPlan plan;
  DiskWanted wanted = wanted_in;
  // mountinfo lists mount points normalised: compare (and write fstab) alike.
  std::string mp = lexically_normal(wanted.mount_point);
  plan.mount_point = wanted.mount_point;
  if (mp.empty() || mp.front() != '/' || mp == "/")
    return refuse(std::move(plan), Reason::ConfigInvalid,
                  "mount point \"" + wanted.mount_point + "\" is not an absolute path below /");
  wanted.mount_point = plan.mount_point = mp;

  auto const in_use = disks_in_use(facts, wanted, plan);
  auto const eligible = screen_candidates(facts, wanted, in_use, plan);
  DiskFacts const* chosen = nullptr;
  if (auto refusal = choose(eligible, wanted, plan, chosen)) {
    plan.refusal = std::move(refusal);
    plan.actions.clear();
    return plan;
  }

  Classification const& cls = classification_of(plan, chosen);
  plan.chosen =
      ChosenDisk{.name = chosen->name,
                 .dev_path = chosen->dev_path,
                 .size_bytes = chosen->size_bytes,
                 .serial = chosen->serial,
                 .classification = cls,
                 .device = cls.kind == ContentKind::Blank ? std::string() : partition_device(*chosen, cls.partition)};
  if (cls.kind == ContentKind::Foreign)
    return refuse(std::move(plan), Reason::DiskHasForeignContent,
                  chosen->dev_path + " (" + format_size(chosen->size_bytes) + ") holds " + cls.summary +
                      "; refusing to touch it");
  if (auto refusal = check_mount_target(facts, *chosen, wanted.mount_point, plan)) {
    plan.refusal = std::move(refusal);
    plan.actions.clear();
    return plan;
  }
  if (auto refusal = plan_growth(*chosen, plan)) {
    plan.refusal = std::move(refusal);
    plan.actions.clear();
    return plan;
  }
  plan_actions(wanted, plan);
  return plan;
}

}  // namespace cosmicac::disk
