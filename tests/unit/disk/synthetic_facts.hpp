// Builders for synthetic SystemFacts (decide/describe tests): no hardware.
#pragma once

#include "disk/facts.hpp"

#include <cstdint>
#include <string>

namespace cosmicac::disk::test {

inline constexpr std::uint64_t GiB = 1ULL << 30;

inline ContentFacts blank_content() { return {}; }

inline ContentFacts ours_content(std::string const& uuid = "0c0c-ours") {
  ContentFacts c;
  c.table_type = "gpt";
  c.partitions.push_back({.number = 1,
                          .start_bytes = 1 << 20,
                          .size_bytes = 100 * GiB,
                          .name = kPartitionName,
                          .type = kLinuxFsTypeGuid,
                          .content = {.type = uuid.empty() ? "" : "ext4",
                                      .usage = uuid.empty() ? "" : "filesystem",
                                      .uuid = uuid,
                                      .label = uuid.empty() ? "" : kFilesystemLabel}});
  return c;
}

inline ContentFacts whole_fs_content(std::string const& type, std::string const& usage,
                                     std::string const& uuid = "u-1") {
  ContentFacts c;
  c.whole = {.type = type, .usage = usage, .uuid = uuid};
  return c;
}

// A disk named `name` of `gib` GiB with kernel partitions name+suffix+N for each N < partitions.
inline DiskFacts make_disk(std::string const& name, std::uint64_t gib, ContentFacts content = {},
                           std::string const& serial = {}) {
  DiskFacts d{.name = name,
              .dev_path = "/dev/" + name,
              .size_bytes = gib * GiB,
              .serial = serial,
              .content_probed = true,
              .content = std::move(content)};
  for (auto const& p : d.content.partitions) {
    bool const digit_end = !name.empty() && name.back() >= '0' && name.back() <= '9';
    std::string const pname = name + (digit_end ? "p" : "") + std::to_string(p.number);
    d.kernel_partitions.push_back({.number = p.number, .name = pname, .dev_path = "/dev/" + pname});
  }
  return d;
}

// Adds a disk and its graph nodes (the disk, and its kernel partitions → disk).
inline void add_disk(SystemFacts& f, DiskFacts d) {
  f.graph.push_back({.name = d.name});
  for (auto const& p : d.kernel_partitions) f.graph.push_back({.name = p.name, .parents = {d.name}});
  f.disks.push_back(std::move(d));
}

}  // namespace cosmicac::disk::test
