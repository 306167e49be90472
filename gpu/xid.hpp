// Xid errors: the NVIDIA driver's report of a GPU fault, one kernel-log line
// each, e.g.
//
//   NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
//
// read here from /dev/kmsg, whose records are "prio,seq,usec,flags;text" plus
// continuation lines of key=value that start with a space.
#pragma once

#include "gpu/pci_address.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::gpu {

struct XidEvent {
  PciAddress gpu;  // domain:bus:device (the driver prints no function)
  unsigned code = 0;
  std::string detail;  // what follows the code, printable ASCII, ≤ 160 bytes
};

// One kernel-log line (a kmsg record, a dmesg line with its "[   12.3]"
// prefix, or a journal message): the Xid it carries, if any. "PCI:" before the
// address is optional (older drivers leave it out). Lines over 8 KiB are not read.
std::optional<XidEvent> parse_xid_line(std::string_view line);

// Xids after which the GPU must be reset before it can be trusted: double-bit
// ECC (48), row-remap event and failure (63, 64), NVLink error (74), fallen off
// the bus (79), contained and uncontained ECC errors (94, 95).
bool xid_needs_reset(unsigned code) noexcept;

// One /dev/kmsg record ("6,1234,5678901,-;NVRM: Xid (…): 79, …"): its Xid, if any.
std::optional<XidEvent> parse_kmsg_record(std::string_view record);

// Records one per line (a saved copy of /dev/kmsg): their Xids, at most 256.
std::vector<XidEvent> xids_of_kmsg_text(std::string_view text);

// The Xids of every record of the kernel's log buffer at `kmsg_path` (since
// boot, as far as the buffer reaches), at most 256; a missing or unreadable
// device gives none. A regular file there is read as a saved copy (tests).
std::vector<XidEvent> read_kmsg_xids(std::string const& kmsg_path);

}  // namespace cosmicac::gpu
