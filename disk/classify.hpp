// What a disk holds, judged from libblkid's facts: the rules that decide
// whether the disk step may write to it (blank), finish its own earlier work
// (ours), use it as it is (an existing filesystem), or must refuse (foreign).
#pragma once

#include "disk/facts.hpp"

#include <string>
#include <string_view>

namespace cosmicac::disk {

enum class ContentKind {
  Blank,               // nothing on the whole disk (end-of-disk signatures and a backup GPT included),
                       // first and last MiB zero, no filesystem at a usual partition start: we partition and format
  Ours,                // a sound GPT with our single cosmicac-data partition, empty or with our ext4
                       // (labelled cosmicac-data); or that table with a torn primary header (an
                       // interrupted write) whose backup lists it, holding our ext4: repaired from the backup
  ExistingFilesystem,  // ext4/xfs/btrfs on the whole disk or on its only partition: mount as is
  Foreign,             // anything else: refuse, write nothing
};

std::string_view content_kind_name(ContentKind kind) noexcept;

struct Classification {
  ContentKind kind = ContentKind::Foreign;
  std::string summary;  // for people: "blank", "ext4 on the whole disk", "LVM2_member signature on the whole disk"
  int partition = 0;    // the partition holding (or to hold) the data; 0 = the whole disk
  std::string fs_type;  // "" while our partition has no filesystem yet
  std::string fs_uuid;
  // Ours, read from its backup GPT: the primary is the same table's, torn or
  // stale (ContentFacts::primary_torn), and the backup lists our partition
  // alone, of our type, holding our ext4. The growth writes the primary anew
  // from the backup (libfdisk's recovery), before anything else.
  bool table_from_backup = false;
};

// Filesystems we mount as we find them (never repartitioned nor reformatted).
bool is_adoptable_filesystem(std::string_view blkid_type) noexcept;

Classification classify(ContentFacts const& facts);

}  // namespace cosmicac::disk
