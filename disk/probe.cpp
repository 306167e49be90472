#include "disk/probe.hpp"

#include "common/file_io.hpp"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace cosmicac::disk {

namespace {

constexpr std::uint64_t kSector = 512;       // libblkid reports partition offsets in 512-byte sectors
constexpr std::size_t kEdgeBytes = 1 << 20;  // a blank disk's first and last MiB are zero

struct ProbeDeleter {
  void operator()(blkid_struct_probe* p) const noexcept { blkid_free_probe(p); }
};
using ProbePtr = std::unique_ptr<blkid_struct_probe, ProbeDeleter>;

// Linux keeps one page cache for a whole disk and another for each of its
// partitions, and drops the whole disk's only on its last close, which an open
// or mounted partition postpones for good. A filesystem made through the
// partition's node then reads as the stale zeros through the whole disk (the
// delivery-cloudinit VM: the main unit planned to format the filesystem the
// disk unit had just made and mounted). So every probe starts by dropping the
// device's clean cached pages, as systemd's dissect-image does before probing
// at an offset. BLKFLSBUF needs CAP_SYS_ADMIN; the fadvise fallback does not.
void drop_cached_pages(int fd) {
  if (::ioctl(fd, BLKFLSBUF, 0) == 0) return;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

// The device, opened read-only for a probe, its stale cached pages dropped.
UniqueFd open_for_probe(std::string const& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.valid()) drop_cached_pages(fd.get());
  return fd;
}

std::string lookup(blkid_probe pr, const char* name) {
  const char* data = nullptr;
  if (blkid_probe_lookup_value(pr, name, &data, nullptr) == 0 && data != nullptr) return data;
  return {};
}

std::string errno_text(int e) { return std::strerror(e); }

// Superblock probe of [offset, offset+size) of fd; size 0 = to the end.
AreaProbe probe_area(int fd, std::uint64_t offset, std::uint64_t size) {
  AreaProbe out;
  ProbePtr pr(blkid_new_probe());
  if (!pr) return {.error = "cannot allocate a libblkid probe"};
  if (blkid_probe_set_device(pr.get(), fd, static_cast<blkid_loff_t>(offset), static_cast<blkid_loff_t>(size)) != 0)
    return {.error = "libblkid cannot use the device area"};
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(),
                                    BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL);
  blkid_probe_enable_partitions(pr.get(), 0);
  int const rc = blkid_do_safeprobe(pr.get());
  if (rc == -2) out.ambiguous = true;
  else if (rc < 0) out.error = "libblkid probe failed";
  else if (rc == 0)
    out.signature = {.type = lookup(pr.get(), "TYPE"),
                     .usage = lookup(pr.get(), "USAGE"),
                     .uuid = lookup(pr.get(), "UUID"),
                     .label = lookup(pr.get(), "LABEL")};
  return out;
}

// Whether [offset, offset+length) of fd holds only zero bytes (reading stops at EOF).
bool range_is_zero(int fd, std::uint64_t offset, std::size_t length, std::string& error) {
  std::vector<char> buf(length);
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t const n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      error = "cannot read " + std::to_string(length) + " bytes at offset " + std::to_string(offset) + ": " +
              errno_text(errno);
      return false;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return std::all_of(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(got), [](char c) { return c == 0; });
}

// Where a partition table (now gone) would have put the first partition: 1 MiB
// (fdisk, sfdisk, parted, gdisk, systemd-repart, Windows, our own partition),
// 2048 logical sectors (8 MiB on 4Kn disks) and the coarser alignments some
// tools and arrays use. Starts inside the first MiB need no probe: that MiB
// must be all zeros anyway.
std::vector<std::uint64_t> usual_partition_starts(std::uint64_t sector_size) {
  std::vector<std::uint64_t> v{1ULL << 20, 2048 * sector_size, 2ULL << 20, 4ULL << 20, 8ULL << 20, 16ULL << 20};
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The disk GUID of a GPT header (16 bytes at offset 56: three little-endian
// fields, then eight bytes as they are), as libblkid spells a PTUUID.
std::string gpt_disk_guid(unsigned char const* h) {
  auto le = [&](int at, int n) {
    unsigned v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8U) | h[at + i];
    return v;
  };
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", le(56, 4), le(60, 2), le(62, 2),
                h[64], h[65], h[66], h[67], h[68], h[69], h[70], h[71]);
  return buf;
}

// Whether LBA 1 holds a GPT header of the table whose disk GUID is `guid`:
// the signature, its own LBA 1, the same disk GUID (its checksums may fail:
// that is what makes it torn).
bool primary_of_same_table(int fd, std::uint64_t sector_size, char const* guid) {
  if (guid == nullptr) return false;
  unsigned char h[92] = {};
  if (::pread(fd, h, sizeof h, static_cast<off_t>(sector_size)) != static_cast<ssize_t>(sizeof h)) return false;
  std::uint64_t my_lba = 0;
  for (int i = 7; i >= 0; --i) my_lba = (my_lba << 8U) | h[24 + i];
  return std::memcmp(h, "EFI PART", 8) == 0 && my_lba == 1 && ::strcasecmp(gpt_disk_guid(h).c_str(), guid) == 0;
}

void set_partitions_probing(blkid_probe pr) {
  blkid_probe_enable_partitions(pr, 1);
  // Without this libblkid ignores a GPT that lacks its protective MBR, and
  // with it it falls back to the backup header at the last LBA when the
  // primary is gone: a zapped head (wipefs of the MBR, a stray dd) still
  // shows the table that sfdisk and systemd-repart would find.
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_FORCE_GPT);
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The table's entries, from a probe of the partitions chain alone, each
// entry's area probed for a superblock. False (with probe_error) on failure.
bool read_partition_entries(int fd, std::string const& path, std::uint64_t sector_size, ContentFacts& facts) {
  ProbePtr pp(blkid_new_probe());
  if (!pp || blkid_probe_set_device(pp.get(), fd, 0, 0) != 0) {
    facts.probe_error = "libblkid cannot use " + path;
    return false;
  }
  blkid_probe_enable_superblocks(pp.get(), 0);
  set_partitions_probing(pp.get());
  blkid_partlist list = blkid_probe_get_partitions(pp.get());
  if (list == nullptr) {
    facts.probe_error = "libblkid cannot read the " + facts.table_type + " partition table of " + path;
    return false;
  }
  // The primary GPT header sits at LBA 1; libblkid names the header it used.
  blkid_parttable const table = blkid_partlist_get_table(list);
  facts.table_from_backup = facts.table_type == "gpt" && table != nullptr &&
                            static_cast<std::uint64_t>(blkid_parttable_get_offset(table)) != sector_size;
  facts.primary_torn = facts.table_from_backup && primary_of_same_table(fd, sector_size, blkid_parttable_get_id(table));
  int const n = blkid_partlist_numof_partitions(list);
  for (int i = 0; i < n; ++i) {
    blkid_partition par = blkid_partlist_get_partition(list, i);
    if (par == nullptr) continue;
    PartitionEntry e;
    e.number = blkid_partition_get_partno(par);
    e.start_bytes = static_cast<std::uint64_t>(blkid_partition_get_start(par)) * kSector;
    e.size_bytes = static_cast<std::uint64_t>(blkid_partition_get_size(par)) * kSector;
    if (const char* name = blkid_partition_get_name(par)) e.name = name;
    if (const char* type = blkid_partition_get_type_string(par)) {
      e.type = upper(type);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(blkid_partition_get_type(par)) & 0xffU);
      e.type = buf;
    }
    AreaProbe const area = probe_area(fd, e.start_bytes, e.size_bytes);
    e.content = area.signature;
    e.content_ambiguous = area.ambiguous;
    e.content_error = area.error;
    facts.partitions.push_back(std::move(e));
  }
  return true;
}

// Nothing libblkid recognises on the whole disk. Blank needs more than that:
// zero bytes at both ends and no filesystem where a partition would have
// started (a table can be gone while its filesystems remain).
void probe_blank_evidence(int fd, std::string const& path, std::uint64_t disk_size, std::uint64_t sector_size,
                          ContentFacts& facts) {
  std::string error;
  auto const edge = static_cast<std::size_t>(std::min<std::uint64_t>(kEdgeBytes, disk_size));
  facts.head_zero = range_is_zero(fd, 0, edge, error);
  if (error.empty()) facts.tail_zero = range_is_zero(fd, disk_size - edge, edge, error);
  if (!error.empty()) {
    facts.probe_error = error + " of " + path;
    return;
  }
  for (std::uint64_t const start : usual_partition_starts(sector_size)) {
    if (start >= disk_size) continue;
    AreaProbe const area = probe_area(fd, start, disk_size - start);
    if (area.signature.type.empty() && !area.ambiguous && area.error.empty()) continue;
    facts.at_partition_starts.push_back(
        {.offset = start, .signature = area.signature, .ambiguous = area.ambiguous, .error = area.error});
  }
}

}  // namespace

// The whole disk first (superblocks and partition tables together), then the
// table's entries, or the evidence that an unrecognised disk is blank.
ContentFacts probe_content(std::string const& path) {
  ContentFacts facts;
  UniqueFd const fd = open_for_probe(path);
  if (fd.get() < 0) {
    facts.probe_error = "cannot open " + path + ": " + errno_text(errno);
    return facts;
  }

  // Superblocks and partition tables together, so that a filesystem and a
  // partition table on the same disk (or two filesystems) show up as such.
  ProbePtr pr(blkid_new_probe());
  if (!pr || blkid_probe_set_device(pr.get(), fd.get(), 0, 0) != 0) {
    facts.probe_error = "libblkid cannot use " + path;
    return facts;
  }
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(),
                                    BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL);
  set_partitions_probing(pr.get());
  int const rc = blkid_do_safeprobe(pr.get());
  if (rc == -2) {
    facts.ambiguous = true;
    return facts;
  }
  if (rc < 0) {
    facts.probe_error = "libblkid probe of " + path + " failed";
    return facts;
  }
  blkid_loff_t const size = blkid_probe_get_size(pr.get());
  if (size < 0) {
    facts.probe_error = "libblkid cannot tell the size of " + path;
    return facts;
  }
  auto const disk_size = static_cast<std::uint64_t>(size);
  std::uint64_t const sector_size = blkid_probe_get_sectorsize(pr.get());
  if (rc == 0) {
    facts.whole = {.type = lookup(pr.get(), "TYPE"),
                   .usage = lookup(pr.get(), "USAGE"),
                   .uuid = lookup(pr.get(), "UUID"),
                   .label = lookup(pr.get(), "LABEL")};
    facts.table_type = lookup(pr.get(), "PTTYPE");
  }

  if (!facts.table_type.empty() && !read_partition_entries(fd.get(), path, sector_size, facts)) return facts;
  if (facts.whole.type.empty() && facts.table_type.empty())
    probe_blank_evidence(fd.get(), path, disk_size, sector_size, facts);
  return facts;
}

AreaProbe probe_superblock(std::string const& path) {
  UniqueFd const fd = open_for_probe(path);
  if (fd.get() < 0) return {.error = "cannot open " + path + ": " + errno_text(errno)};
  return probe_area(fd.get(), 0, 0);
}

}  // namespace cosmicac::disk
