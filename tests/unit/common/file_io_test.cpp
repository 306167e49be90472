#include "common/file_io.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace cosmicac;
using cosmicac::test::TempDir;

namespace {
std::string slurp(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t mode_of(fs::path const& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::size_t entries(fs::path const& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

struct Umask {
  mode_t old;
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
};
}  // namespace

TEST_CASE("write_file_atomically: exact content and exactly the requested mode, whatever the umask") {
  TempDir t{"file-io"};
  auto const path = (t.path / "f").string();
  {
    Umask u(0077);
    REQUIRE(write_file_atomically(path, "one", 0755));
    CHECK(slurp(path) == "one");
    CHECK(mode_of(path) == 0755);
  }
  {
    Umask u(0);
    REQUIRE(write_file_atomically(path, std::string("two\0bytes", 9), 0600));
    CHECK(slurp(path) == std::string("two\0bytes", 9));
    CHECK(mode_of(path) == 0600);
  }
  CHECK(entries(t.path) == 1);  // no temporary file left beside it
}

TEST_CASE("write_file_atomically replaces a symlink at the target, leaving what it pointed to untouched") {
  TempDir t{"file-io"};
  auto const victim = t.path / "victim";
  std::ofstream(victim) << "precious";
  fs::permissions(victim, static_cast<fs::perms>(0600));
  auto const path = t.path / "target";
  fs::create_symlink(victim, path);

  REQUIRE(write_file_atomically(path.string(), "new", 0755));
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  CHECK(slurp(path) == "new");
  CHECK(slurp(victim) == "precious");
  CHECK(mode_of(victim) == 0600);
}

TEST_CASE("write_file_atomically: a failure leaves no temporary file and names the path") {
  TempDir t{"file-io"};
  auto const path = t.path / "busy";
  fs::create_directories(path / "inside");  // rename(2) cannot replace a non-empty directory
  auto st = write_file_atomically(path.string(), "data", 0644, Reason::DiskError);
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::DiskError);
  CHECK(st.error().message.find(path.string()) != std::string::npos);
  CHECK(entries(t.path) == 1);  // only the directory: the temporary file is gone

  auto missing_dir = write_file_atomically((t.path / "no/such/f").string(), "x", 0644);
  REQUIRE_FALSE(missing_dir);
  CHECK(missing_dir.error().message.find((t.path / "no/such/f").string()) != std::string::npos);
}

TEST_CASE("read_file: bounded, and with NoSymlinks a symlink is refused, not followed") {
  TempDir t{"file-io"};
  auto const f = t.path / "f";
  std::ofstream(f) << "0123456789";
  REQUIRE(read_file(f.string(), 10));
  CHECK(*read_file(f.string(), 10) == "0123456789");
  auto big = read_file(f.string(), 9);
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find(f.string()) != std::string::npos);

  auto const link = t.path / "link";
  fs::create_symlink(f, link);
  CHECK(read_file(link.string(), 100));
  CHECK_FALSE(read_file(link.string(), 100, Follow::NoSymlinks));
}

TEST_CASE("UniqueFd closes once; release hands the descriptor over") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  {
    UniqueFd a(p[0]);
    UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK(b.get() == p[0]);
  }
  CHECK(::fcntl(p[0], F_GETFD) == -1);  // closed by b
  UniqueFd c(p[1]);
  int const raw = c.release();
  CHECK_FALSE(c.valid());
  CHECK(::fcntl(raw, F_GETFD) != -1);
  ::close(raw);
}

TEST_CASE(
    "read_file: exactly the limit is read; one byte more is refused, naming the path and the limit, not the content") {
  TempDir t{"file-io"};
  auto const f = (t.path / "f").string();
  std::ofstream(f) << "SECRET-1234";  // 11 bytes
  auto exact = read_file(f, 11);
  REQUIRE(exact);
  CHECK(*exact == "SECRET-1234");
  auto over = read_file(f, 10, Follow::Symlinks, Reason::ConfigInvalid);
  REQUIRE_FALSE(over);
  CHECK(over.error().reason == Reason::ConfigInvalid);
  CHECK(over.error().message == f + " is larger than 10 bytes");
  CHECK(over.error().message.find("SECRET") == std::string::npos);

  std::ofstream(t.path / "empty").flush();
  CHECK(*read_file((t.path / "empty").string(), 0) == "");
  CHECK_FALSE(read_file(f, 0));
}

TEST_CASE("read_file: a missing file or a directory is an error naming the path") {
  TempDir t{"file-io"};
  auto const missing = (t.path / "no-such-file").string();
  auto r = read_file(missing, 100, Follow::Symlinks, Reason::CredInvalid);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::CredInvalid);
  CHECK(r.error().message == "cannot read " + missing + ": " + std::strerror(ENOENT));
  auto dir = read_file(t.path.string(), 100);
  REQUIRE_FALSE(dir);
  CHECK(dir.error().message == "cannot read " + t.path.string() + ": " + std::strerror(EISDIR));
}

TEST_CASE("read_to_end: files larger than its first buffer come back whole, up to and at the limit") {
  TempDir t{"file-io"};
  auto const f = t.path / "big";
  std::string data;
  for (std::size_t i = 0; data.size() < 300'000; ++i) data += std::to_string(i) + ",";
  std::ofstream(f, std::ios::binary) << data;
  for (std::size_t limit :
       {data.size(), data.size() + 1, std::size_t{1} << 30, std::numeric_limits<std::size_t>::max()}) {
    UniqueFd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    std::string out = "left over";
    CHECK(read_to_end(fd.get(), limit, out) == 0);
    CHECK(out == data);
  }
  UniqueFd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
  std::string out = "left over";
  CHECK(read_to_end(fd.get(), data.size() - 1, out) == EFBIG);
  CHECK(out.empty());
  CHECK(read_to_end(-1, 10, out) == EBADF);
  CHECK(out.empty());
}

namespace {
std::atomic<int> g_interruptions{0};
void count_signal(int) { ++g_interruptions; }
}  // namespace

TEST_CASE("read_to_end: a read interrupted by a signal (EINTR) is retried, nothing lost") {
  struct sigaction sa {
  }, old{};
  sa.sa_handler = count_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read(2) fails with EINTR
  REQUIRE(::sigaction(SIGUSR1, &sa, &old) == 0);
  int p[2];
  REQUIRE(::pipe(p) == 0);
  UniqueFd rd(p[0]), wr(p[1]);
  pthread_t const reader = ::pthread_self();
  g_interruptions = 0;
  bool wrote_all = true;
  std::thread writer([&] {
    for (char const* piece : {"one ", "two ", "three"}) {
      for (int i = 0; i < 3; ++i) {  // the reader is blocked in read(2) by now
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ::pthread_kill(reader, SIGUSR1);
      }
      if (::write(wr.get(), piece, std::strlen(piece)) != static_cast<ssize_t>(std::strlen(piece))) wrote_all = false;
    }
    wr.reset();
  });
  std::string out;
  int const err = read_to_end(rd.get(), 100, out);
  writer.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  REQUIRE(wrote_all);
  CHECK(err == 0);
  CHECK(out == "one two three");
  CHECK(g_interruptions >= 1);  // pending signals may merge under load: at least one arrived
}

TEST_CASE("UniqueFd: destruction, reset and move-assignment close what it held; moved-from holds nothing") {
  auto is_open = [](int fd) { return ::fcntl(fd, F_GETFD) != -1; };
  int p[2];
  REQUIRE(::pipe(p) == 0);
  {
    UniqueFd a(p[0]);
    UniqueFd b(p[1]);
    b = std::move(a);  // b's pipe end is closed, a's moves over
    CHECK_FALSE(is_open(p[1]));
    CHECK(is_open(p[0]));
    CHECK_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK(a.reset() == 0);   // NOLINT(bugprone-use-after-move): nothing held, nothing closed
    CHECK(b.get() == p[0]);
  }
  CHECK_FALSE(is_open(p[0]));  // closed when b died

  REQUIRE(::pipe(p) == 0);
  UniqueFd c(p[0]);
  CHECK(c.reset() == 0);
  CHECK_FALSE(c.valid());
  CHECK_FALSE(is_open(p[0]));
  UniqueFd d(p[1]);
  UniqueFd e;
  e = std::move(d);
  CHECK(e.get() == p[1]);
  CHECK(is_open(p[1]));
}

TEST_CASE("directory_entries: every name but . and .., and an error naming the directory, never a part-listing") {
  TempDir t{"file-io"};
  fs::create_directories(t.path / "sub");
  std::ofstream(t.path / "a") << "x";
  fs::create_symlink("a", t.path / "link");
  auto names = directory_entries(t.path.string());
  REQUIRE(names);
  std::sort(names->begin(), names->end());
  CHECK(*names == std::vector<std::string>{"a", "link", "sub"});

  auto none = directory_entries((t.path / "missing").string(), Reason::DiskError);
  REQUIRE_FALSE(none);
  CHECK(none.error().reason == Reason::DiskError);
  CHECK(none.error().message.find((t.path / "missing").string()) != std::string::npos);
  auto file = directory_entries((t.path / "a").string());
  REQUIRE_FALSE(file);
  CHECK(file.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("lexically_normal equals std::filesystem's lexically_normal, without its trailing slash") {
  for (std::string const p : {"/",        "//",         "/a",
                              "/a/",      "/a//b",      "/a/./b/",
                              "/a/../b",  "/a/b/..",    "/a/b/../..",
                              "/..",      "/../a",      "/a/../../b",
                              "/./",      "/mnt/data/", "/mnt//data/./x/../",
                              "a",        "a/",         "a/..",
                              "a/../..",  "../a",       "./a/./b",
                              ".",        "..",         "a/b/../../c",
                              "/a/.../b", "/a/..b/c",   ""}) {
    std::string want = fs::path(p).lexically_normal().string();
    while (want.size() > 1 && want.back() == '/') want.pop_back();
    CAPTURE(p);
    CHECK(lexically_normal(p) == want);
  }
}

TEST_CASE("join_path, base_name, real_path") {
  CHECK(join_path("/sys", "class/block") == "/sys/class/block");
  CHECK(join_path("/sys/", "/class") == "/sys/class");
  CHECK(join_path("/", "/usr/bin") == "/usr/bin");
  CHECK(join_path("/target", "/etc/default/x") == "/target/etc/default/x");
  CHECK(base_name("/sys/devices/x/vda") == "vda");
  CHECK(base_name("/a/b/") == "b");
  CHECK(base_name("/") == "");
  CHECK(base_name("name") == "name");

  TempDir t{"file-io"};
  fs::create_directories(t.path / "d");
  fs::create_symlink("d", t.path / "l");
  CHECK(real_path((t.path / "l/../l").string()) == fs::canonical(t.path / "d").string());
  CHECK(real_path((t.path / "missing").string()).empty());
}

TEST_CASE("make_directories: parents made, existing directories fine, a file in the way named") {
  TempDir t{"file-io"};
  auto const deep = t.path / "a/b/c";
  REQUIRE(make_directories(deep.string()));
  CHECK(fs::is_directory(deep));
  CHECK(make_directories(deep.string() + "/"));  // again: nothing to do
  std::ofstream(t.path / "file") << "x";
  auto blocked = make_directories((t.path / "file/sub").string(), Reason::DiskError);
  REQUIRE_FALSE(blocked);
  CHECK(blocked.error().reason == Reason::DiskError);
  CHECK(blocked.error().message.find((t.path / "file").string()) != std::string::npos);
}
