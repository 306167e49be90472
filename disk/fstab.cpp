#include "disk/fstab.hpp"

#include "common/file_io.hpp"
#include "common/libmount_ptr.hpp"

#include <libmount/libmount.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace cosmicac::disk {

namespace {

std::string str(const char* s) { return s ? s : ""; }

// libmount skips a line it cannot parse unless told otherwise; rewriting the
// file would then drop it. Stop parsing instead and refuse to edit.
int stop_on_parse_error(libmnt_table* tb, const char* /*filename*/, int line) {
  if (auto* bad = static_cast<int*>(mnt_table_get_userdata(tb)); bad && *bad == 0) *bad = line;
  return -EINVAL;
}

Error fail(std::string const& path, std::string const& what, int err) {
  return make_error(Reason::DiskError, what + " " + path + ": " + std::strerror(err));
}

bool same_entry(libmnt_fs* fs, FstabEntry const& e) {
  return str(mnt_fs_get_source(fs)) == e.source && str(mnt_fs_get_target(fs)) == e.target &&
         str(mnt_fs_get_fstype(fs)) == e.fstype && str(mnt_fs_get_options(fs)) == e.options &&
         mnt_fs_get_freq(fs) == e.freq && mnt_fs_get_passno(fs) == e.passno;
}

// libmount writes a table to a FILE*: render it into memory, then replace the
// file through the one atomic writer, keeping the file's mode.
Status write_atomically(std::string const& path, libmnt_table* tb) {
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = ::open_memstream(&buf, &len);
  if (f == nullptr) return fail(path, "cannot render", errno);
  int rc = mnt_table_write_file(tb, f);
  if (std::fclose(f) != 0 && rc == 0) rc = -errno;
  std::unique_ptr<char, decltype(&std::free)> owned(buf, &std::free);
  if (rc != 0) return fail(path, "cannot render", rc < 0 ? -rc : EINVAL);
  mode_t mode = 0644;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  return write_file_atomically(path, std::string_view(buf, len), mode, Reason::DiskError);
}

// The file as a libmount table, comments kept; a missing file is an empty table.
Result<mnt::TablePtr> parse_fstab(std::string const& path) {
  mnt::TablePtr tb(mnt_new_table());
  if (!tb) return make_error(Reason::DiskError, "cannot allocate a libmount table for " + path);
  mnt_table_enable_comments(tb.get(), 1);
  int bad_line = 0;
  mnt_table_set_userdata(tb.get(), &bad_line);
  mnt_table_set_parser_errcb(tb.get(), stop_on_parse_error);
  if (::access(path.c_str(), F_OK) == 0) {
    int const rc = mnt_table_parse_fstab(tb.get(), path.c_str());
    mnt_table_set_userdata(tb.get(), nullptr);
    if (bad_line != 0)
      return make_error(Reason::DiskError,
                        "cannot parse " + path + " line " + std::to_string(bad_line) + ": not editing it");
    if (rc != 0) return fail(path, "cannot read", rc < 0 ? -rc : EINVAL);
  } else if (errno != ENOENT) {
    return fail(path, "cannot access", errno);
  }
  return tb;
}

}  // namespace

FstabEntry data_fstab_entry(std::string const& uuid, std::string const& mount_point, std::string const& fstype,
                            std::chrono::seconds device_timeout) {
  return {.source = "UUID=" + uuid,
          .target = mount_point,
          .fstype = fstype,
          .options = "nosuid,nodev,nofail,x-systemd.device-timeout=" + std::to_string(device_timeout.count()) + "s",
          .freq = 0,
          .passno = 2};
}

Result<bool> ensure_fstab_entry(std::string const& path, FstabEntry const& entry) {
  auto parsed = parse_fstab(path);
  if (!parsed) return parsed.error();
  mnt::TablePtr tb = std::move(*parsed);

  // Earlier lines of ours: same mount point or same source.
  std::vector<libmnt_fs*> matches;
  mnt::IterPtr it(mnt_new_iter(MNT_ITER_FORWARD));
  libmnt_fs* fs = nullptr;
  while (mnt_table_next_fs(tb.get(), it.get(), &fs) == 0) {
    if (str(mnt_fs_get_target(fs)) == entry.target || str(mnt_fs_get_source(fs)) == entry.source) matches.push_back(fs);
  }
  if (matches.size() == 1 && same_entry(matches.front(), entry)) return false;

  mnt::FsPtr line(mnt_new_fs());
  if (!line || mnt_fs_set_source(line.get(), entry.source.c_str()) != 0 ||
      mnt_fs_set_target(line.get(), entry.target.c_str()) != 0 ||
      mnt_fs_set_fstype(line.get(), entry.fstype.c_str()) != 0 ||
      mnt_fs_set_options(line.get(), entry.options.c_str()) != 0)
    return make_error(Reason::DiskError, "cannot build the fstab line for " + entry.target);
  mnt_fs_set_freq(line.get(), entry.freq);
  mnt_fs_set_passno(line.get(), entry.passno);
  if (matches.empty()) {
    if (mnt_table_add_fs(tb.get(), line.get()) != 0)
      return make_error(Reason::DiskError, "cannot add the fstab line for " + entry.target);
  } else {
    if (const char* comment = mnt_fs_get_comment(matches.front())) mnt_fs_set_comment(line.get(), comment);
    if (mnt_table_insert_fs(tb.get(), 1, matches.front(), line.get()) != 0)
      return make_error(Reason::DiskError, "cannot add the fstab line for " + entry.target);
    for (auto* old : matches) mnt_table_remove_fs(tb.get(), old);
  }
  if (auto st = write_atomically(path, tb.get()); !st) return st.error();
  return true;
}

Result<bool> fstab_has_line(std::string const& path, std::string const& source, std::string const& target) {
  auto tb = parse_fstab(path);
  if (!tb) return tb.error();
  mnt::IterPtr it(mnt_new_iter(MNT_ITER_FORWARD));
  libmnt_fs* fs = nullptr;
  while (mnt_table_next_fs(tb->get(), it.get(), &fs) == 0)
    if (str(mnt_fs_get_source(fs)) == source && str(mnt_fs_get_target(fs)) == target) return true;
  return false;
}

}  // namespace cosmicac::disk
