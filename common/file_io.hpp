// Small file-I/O primitives shared by every module: an owning descriptor, the
// one bounded "read to the end" loop, and one "replace a file atomically".
#pragma once

#include "common/error.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac {

// Owns a file descriptor; closes it once (on destruction, reset or move-assign).
// An fd that must outlive the owner leaves it through release().
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd const&) = delete;
  UniqueFd& operator=(UniqueFd const&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept;
  // Closes the descriptor; the close's own errno (0 when fine or nothing held).
  int reset() noexcept;

 private:
  int fd_ = -1;
};

// Reads `fd` from its offset to its end into `out` (replacing what it held):
// 0, the read's errno, or EFBIG when there is more than `limit` bytes (then
// `out` is left empty). EINTR is retried. The buffer grows by copying into a
// larger block and wiping the old one, and any failure wipes what was read, so
// a secret read this way leaves no copy in freed memory (wipe `out` once done).
// Every hand-written read loop goes through here; callers whose errors have
// their own words (a config file, a credential key) word the errno themselves.
int read_to_end(int fd, std::size_t limit, std::string& out);

enum class Follow { Symlinks, NoSymlinks };

// Reads a whole file (at most `limit` bytes, else an error). With
// Follow::NoSymlinks a symlink at `path` is an error (ELOOP), not followed.
// Errors name the path (and the limit when it is exceeded), never the content;
// `reason` is the vocabulary word the caller reports.
Result<std::string> read_file(std::string const& path, std::size_t limit, Follow follow = Follow::Symlinks,
                              Reason reason = Reason::Internal);

// Replaces `path` with exactly `data`, mode exactly `mode` (not the umask's):
// a temporary file is made beside it with mkostemp (a fresh, unpredictable
// name, O_CREAT|O_EXCL: never an existing file or a planted symlink), written,
// fchmod-ed, fsync-ed and renamed over `path`, then the directory is fsync-ed.
// Readers see the old file or the new one, never a mix. rename(2) never
// follows a symlink: one at `path` is itself replaced by the new regular file
// and whatever it pointed to is left untouched. On any failure the temporary
// file is removed and the Error (with `reason`) names the path. The directory
// must exist.
Status write_file_atomically(std::string const& path, std::string_view data, mode_t mode,
                             Reason reason = Reason::Internal);

// The directory part of a path: "a/b" -> "a", "/b" -> "/", "b" -> ".".
std::string parent_directory(std::string const& path);

// Paths and directories without std::filesystem. Why by hand: in the static
// agent std::filesystem costs about 45 KB raw (its path class, canonical(),
// directory_iterator, filesystem_error: bench/README.md, "Binary size"), for
// what readdir(3), realpath(3), mkdir(2) and a few string operations do here.

// The names in `dir` ("." and ".." left out), in readdir's order. An error
// (opening or reading the directory) names `dir`: a listing that stopped
// half-way is never returned as if it were whole.
Result<std::vector<std::string>> directory_entries(std::string const& dir, Reason reason = Reason::Internal);

// `a` + "/" + `b`, one slash between them whatever `a` ends with or `b` starts with.
std::string join_path(std::string_view a, std::string_view b);

// The last component of a path: "/a/b" -> "b", "/a/b/" -> "b", "/" -> "".
std::string base_name(std::string_view path);

// Empty and "." components dropped and ".." applied to the component before it
// (never above "/" of an absolute path); no trailing slash but for "/" itself.
// The same as std::filesystem::path::lexically_normal() without its trailing "/"
// (tests/unit/common: compared with it): "/a//b/./c/../" -> "/a/b".
std::string lexically_normal(std::string_view path);

// realpath(3): `path` with every symlink, "." and ".." resolved; "" when it cannot be.
std::string real_path(std::string const& path);

// Creates `path` and its missing parents (mode 0755, less the umask); ok when
// each already is a directory. The error names the directory it could not make.
Status make_directories(std::string const& path, Reason reason = Reason::Internal);

}  // namespace cosmicac
