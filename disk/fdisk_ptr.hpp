// libfdisk's objects owned by std::unique_ptr: the one set of deleters for the
// modules that read or write partition tables (partition.cpp, grow_partition.cpp).
#pragma once

#include <libfdisk/libfdisk.h>

#include <memory>

namespace cosmicac::disk {

struct FdiskContextDeleter {
  void operator()(fdisk_context* c) const noexcept { fdisk_unref_context(c); }
};
struct FdiskPartitionDeleter {
  void operator()(fdisk_partition* p) const noexcept { fdisk_unref_partition(p); }
};
struct FdiskTableDeleter {
  void operator()(fdisk_table* t) const noexcept { fdisk_unref_table(t); }
};
struct FdiskTypeDeleter {
  void operator()(fdisk_parttype* t) const noexcept { fdisk_unref_parttype(t); }
};
struct FdiskIterDeleter {
  void operator()(fdisk_iter* i) const noexcept { fdisk_free_iter(i); }
};

using FdiskContextPtr = std::unique_ptr<fdisk_context, FdiskContextDeleter>;
using FdiskPartitionPtr = std::unique_ptr<fdisk_partition, FdiskPartitionDeleter>;
using FdiskTablePtr = std::unique_ptr<fdisk_table, FdiskTableDeleter>;
using FdiskTypePtr = std::unique_ptr<fdisk_parttype, FdiskTypeDeleter>;
using FdiskIterPtr = std::unique_ptr<fdisk_iter, FdiskIterDeleter>;

}  // namespace cosmicac::disk
