// Xid errors: the NVIDIA driver's report of a GPU fault, one kernel-log record
// each, e.g.
//
//   NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
//
// read here from /dev/kmsg, whose records are "prio,seq,usec,flags[,…];text"
// (prio = facility << 3 | level) plus continuation lines of key=value that
// start with a space.
//
// An Xid is the driver's record or nothing: a record of the kernel facility (0)
// whose text BEGINS with "NVRM: Xid (". The text anywhere else in a record is
// not one: a segfault report carries a file name a process chose (up to 255
// bytes, after the kernel's own words), and a record written to /dev/kmsg from
// user space is never of the kernel facility (the kernel makes it `user`). A
// kernel record that begins with a process's name (`comm[pid]: segfault …`)
// cannot begin an Xid either: a name is at most 15 bytes and the kernel follows
// it with " (", "[" or ":" and its own words, where an Xid needs
// "NVRM: Xid (PCI:DDDD:BB:DD): N" (at least 25 bytes, hex digits after the
// parenthesis).
#pragma once

#include "gpu/pci_address.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

struct XidEvent {
  PciAddress gpu;  // domain:bus:device (the driver prints no function)
  unsigned code = 0;
  std::string detail;     // what follows the code, printable ASCII, ≤ 160 bytes
  std::uint64_t seq = 0;  // the kernel's sequence number of its record
};

// One /dev/kmsg record's header and text (the text up to the first line end:
// never the key=value dictionary after it). nullopt: not a record.
struct KmsgRecord {
  unsigned facility = 0;  // 0: the kernel; 1: user space (a write to /dev/kmsg)
  unsigned level = 0;
  std::uint64_t seq = 0;
  std::string_view text;
};
std::optional<KmsgRecord> split_kmsg_record(std::string_view record);

// A record's text that begins with "NVRM: Xid (": its Xid. "PCI:" before the
// address is optional (older drivers leave it out). Texts over 8 KiB are not read.
std::optional<XidEvent> parse_xid_text(std::string_view text);

// One /dev/kmsg record ("4,1234,5678901,-;NVRM: Xid (…): 79, …"): its Xid, only
// when the record is the kernel's and its text begins with the Xid.
std::optional<XidEvent> parse_kmsg_record(std::string_view record);

// Xids after which the GPU must be reset before it can be trusted: double-bit
// ECC (48), row-remap event and failure (63, 64), NVLink error (74), fallen off
// the bus (79), contained and uncontained ECC errors (94, 95).
bool xid_needs_reset(unsigned code) noexcept;

inline constexpr std::size_t kMaxResetXidsKept = 1024;  // listed; all are counted, the newest kept
inline constexpr std::size_t kMaxOtherXidsKept = 256;   // the first ones listed; all are counted

// What one read of the kernel log found. Bounded by the bytes (32 MiB) and
// records (2^20) read, never by how many Xids came first: an Xid that needs a
// reset is never hidden by others before it.
struct KernelLog {
  bool readable = false;  // false: the log could not be opened (nothing below is known)
  bool complete = true;   // false: a bound stopped the read before the log's end
  // In log order: the Xids that need a reset (the first kMaxResetXidsKept) and
  // the first kMaxOtherXidsKept others.
  std::vector<XidEvent> xids;
  std::size_t reset_count = 0;  // Xids that need a reset, all of them
  std::size_t other_count = 0;  // other Xids, all of them
  std::optional<XidEvent> newest_reset;
  std::size_t records = 0;
  std::uint64_t first_seq = 0;  // of the first record read (0 when none)
  std::uint64_t next_seq = 0;   // the highest seq read + 1 (0 when none)
  // Records below this seq (down to the one read before, or from 0 for the
  // first record read) were not there to read: the ring had rotated past them,
  // or they were overwritten during the read. 0: none missing.
  std::uint64_t missing_below = 0;
};

// Records one per line (a saved copy of /dev/kmsg).
KernelLog kernel_log_of_text(std::string_view text);

// Every record of the kernel's log buffer at `kmsg_path` (since boot, as far
// as the buffer reaches). A regular file there is read as a saved copy (tests).
KernelLog read_kernel_log(std::string const& kmsg_path);

}  // namespace cosmicac::gpu
