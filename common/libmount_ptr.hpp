// libmount's objects owned by std::unique_ptr: the one set of deleters for
// every module that reads mount tables or mounts (header-only; link
// cosmicac_libmount, which brings libmount).
#pragma once

#include <libmount/libmount.h>

#include <memory>

namespace cosmicac::mnt {

struct TableDeleter {
  void operator()(libmnt_table* t) const noexcept { mnt_unref_table(t); }
};
struct FsDeleter {
  void operator()(libmnt_fs* f) const noexcept { mnt_unref_fs(f); }
};
struct IterDeleter {
  void operator()(libmnt_iter* i) const noexcept { mnt_free_iter(i); }
};
struct ContextDeleter {
  void operator()(libmnt_context* c) const noexcept { mnt_free_context(c); }
};

using TablePtr = std::unique_ptr<libmnt_table, TableDeleter>;
using FsPtr = std::unique_ptr<libmnt_fs, FsDeleter>;
using IterPtr = std::unique_ptr<libmnt_iter, IterDeleter>;
using ContextPtr = std::unique_ptr<libmnt_context, ContextDeleter>;

}  // namespace cosmicac::mnt
