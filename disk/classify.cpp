#include "disk/classify.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace cosmicac::disk {

namespace {

Classification foreign(std::string summary) { return {.kind = ContentKind::Foreign, .summary = std::move(summary)}; }

std::string describe_signature(Signature const& s) {
  std::string out = s.type;
  if (!s.usage.empty()) out += " (" + s.usage + ")";
  return out;
}

// Partition types under which we accept an existing filesystem: the Linux
// filesystem GUID (what parted/sfdisk/our own code write) and MBR type 0x83.
bool is_linux_data_type(std::string const& table, std::string const& type) {
  if (table == "gpt") return type == kLinuxFsTypeGuid;
  if (table == "dos") return type == "0x83";
  return false;
}

std::string describe_offset(std::uint64_t bytes) {
  if (bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Why a disk on which libblkid found neither a signature nor a table is not
// blank ("" = it is): a filesystem left where a partition started, bytes at
// either end.
std::string not_blank_because(ContentFacts const& f) {
  std::vector<std::string> why;
  for (auto const& at : f.at_partition_starts) {
    std::string const where =
        " at " + describe_offset(at.offset) + " (a usual partition start) with no partition table";
    if (!at.error.empty()) why.push_back("probe failed" + where + ": " + at.error);
    else if (at.ambiguous) why.push_back("ambiguous probe" + where);
    else why.push_back(describe_signature(at.signature) + " signature" + where);
  }
  if (!f.head_zero) why.push_back("unrecognised data in the first MiB (no known signature)");
  if (!f.tail_zero) why.push_back("unrecognised data in the last MiB (no known signature)");
  std::string out;
  for (auto const& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

}  // namespace

std::string_view content_kind_name(ContentKind kind) noexcept {
  switch (kind) {
    case ContentKind::Blank: return "blank";
    case ContentKind::Ours: return "ours";
    case ContentKind::ExistingFilesystem: return "existing-filesystem";
    case ContentKind::Foreign: return "foreign";
  }
  return "foreign";
}

bool is_adoptable_filesystem(std::string_view t) noexcept {
  constexpr std::array<std::string_view, 3> kTypes{"ext4", "xfs", "btrfs"};
  for (auto k : kTypes)
    if (t == k) return true;
  return false;
}

namespace {

// A filesystem or other signature written straight onto the whole disk.
Classification classify_whole_disk(ContentFacts const& f) {
  if (!f.table_type.empty())
    return foreign(describe_signature(f.whole) + " signature together with a " + f.table_type + " partition table");
  if (f.whole.usage == "filesystem" && is_adoptable_filesystem(f.whole.type))
    return {.kind = ContentKind::ExistingFilesystem,
            .summary = f.whole.type + " filesystem on the whole disk (UUID " + f.whole.uuid + ")",
            .partition = 0,
            .fs_type = f.whole.type,
            .fs_uuid = f.whole.uuid};
  return foreign(describe_signature(f.whole) + " signature on the whole disk");
}

// The single partition of a GPT we made ourselves (named kPartitionName).
Classification classify_our_partition(PartitionEntry const& p, bool is_fs) {
  Signature const& c = p.content;
  std::string const where = "partition " + std::to_string(p.number);
  if (c.type.empty())
    return {.kind = ContentKind::Ours,
            .summary = "our " + where + " (" + kPartitionName + "), no filesystem yet",
            .partition = p.number};
  // We only ever make ext4 labelled kFilesystemLabel in it: anything else
  // there (an older filesystem under a table we wrote) is not ours.
  if (is_fs && c.type == "ext4" && c.label == kFilesystemLabel)
    return {.kind = ContentKind::Ours,
            .summary = "our " + where + " (" + kPartitionName + ") with " + c.type + " (UUID " + c.uuid + ")",
            .partition = p.number,
            .fs_type = c.type,
            .fs_uuid = c.uuid};
  return foreign("our " + where + " (" + kPartitionName + ") holds " + describe_signature(c) +
                 (c.label.empty() ? std::string(" without a label") : " labelled \"" + c.label + "\"") +
                 ", not the ext4 labelled " + kFilesystemLabel + " we make");
}

// A disk with a partition table: only a table with exactly one partition can
// be ours or adoptable.
Classification classify_partitioned(ContentFacts const& f) {
  if (f.partitions.empty()) return foreign("empty " + f.table_type + " partition table");
  if (f.partitions.size() > 1)
    return foreign(std::to_string(f.partitions.size()) + " partitions in a " + f.table_type + " partition table");
  PartitionEntry const& p = f.partitions.front();
  std::string const where = "partition " + std::to_string(p.number);
  if (!p.content_error.empty()) return foreign(where + ": probe failed: " + p.content_error);
  if (p.content_ambiguous) return foreign(where + ": ambiguous probe: more than one signature");
  Signature const& c = p.content;
  bool const is_fs = c.usage == "filesystem" && is_adoptable_filesystem(c.type);
  if (f.table_type == "gpt" && p.name == kPartitionName) return classify_our_partition(p, is_fs);
  if (is_fs && is_linux_data_type(f.table_type, p.type))
    return {.kind = ContentKind::ExistingFilesystem,
            .summary = c.type + " filesystem on the only partition (" + std::to_string(p.number) + ", " + f.table_type +
                       ") (UUID " + c.uuid + ")",
            .partition = p.number,
            .fs_type = c.type,
            .fs_uuid = c.uuid};
  std::string what = c.type.empty() ? "no recognised content" : describe_signature(c);
  return foreign("the only " + where + " of a " + f.table_type + " table (type " + p.type +
                 (p.name.empty() ? "" : ", name \"" + p.name + "\"") + ") holds " + what);
}

// A GPT seen through its backup header (the primary fails its checksums or
// is gone): ours only when the primary is the same table's, torn or stale (a
// write of the table interrupted: the grow writes the backup, then the
// primary), and the backup lists our partition alone, of the Linux
// filesystem type, holding our ext4. Anything else is refused as a zapped
// head is: nothing says the table is ours to rewrite.
Classification classify_from_backup(ContentFacts const& f) {
  Classification c = classify_partitioned(f);
  bool const ours = f.primary_torn && f.whole.type.empty() && c.kind == ContentKind::Ours && !c.fs_type.empty() &&
                    f.partitions.size() == 1 && f.partitions.front().type == kLinuxFsTypeGuid;
  if (!ours)
    return foreign(
        "a GPT whose primary header is missing or damaged (only its backup at the end of the disk is "
        "valid), listing " +
        std::to_string(f.partitions.size()) + " partition(s)");
  c.table_from_backup = true;
  c.summary += "; its GPT's primary header torn (a write of the table interrupted), its backup at the end valid";
  return c;
}

}  // namespace

Classification classify(ContentFacts const& f) {
  if (!f.probe_error.empty()) return foreign("probe failed: " + f.probe_error);
  if (f.ambiguous) return foreign("ambiguous probe: more than one signature on the disk");
  // A table we cannot trust as a whole is not ours nor adoptable, whatever its
  // entries say (the primary header is what we, and every partitioner, write),
  // unless it is our own, torn by an interrupted grow.
  if (f.table_from_backup) return classify_from_backup(f);
  if (!f.whole.type.empty()) return classify_whole_disk(f);
  if (!f.table_type.empty()) return classify_partitioned(f);
  if (std::string why = not_blank_because(f); !why.empty()) return foreign(why);
  return {.kind = ContentKind::Blank,
          .summary =
              "blank (no signature, no partition table, first and last MiB zero, nothing at the usual "
              "partition starts)"};
}

}  // namespace cosmicac::disk
