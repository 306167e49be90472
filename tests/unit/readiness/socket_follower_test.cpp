#include "readiness/socket_follower.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::readiness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using cosmicac::test::TempDir;

namespace {

// A listening unix socket, like QEMU's chardev socket server.
// -1 on failure (no Catch2 assertions on the server thread).
int listen_on(std::string const& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_all(int fd, std::string_view s) {
  while (!s.empty()) {
    auto n = ::write(fd, s.data(), s.size());
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

Event ev(Event e, std::uint64_t seq) {
  e.seq = seq;
  e.boot_id = "b";
  e.time_ms = 1740830400250;
  return e;
}

}  // namespace

TEST_CASE("SocketFollower reconnects after the server drops it and after the server comes back") {
  TempDir t{"readiness-sock"};
  auto path = (t.path / "serial.sock").string();
  std::string first = to_json_line(ev(started(Step::Pull), 1));
  std::string second = to_json_line(ev(pull_progress(5, 10), 2));
  std::string third = to_json_line(ev(ready({"n", "i", "m", "d"}, 1ms), 3));

  bool server_ok = true;
  std::thread server([&] {
    std::this_thread::sleep_for(300ms);  // not there yet when the follower starts
    int l = listen_on(path);
    if (l < 0) {
      server_ok = false;
      return;
    }
    int c = ::accept(l, nullptr, nullptr);
    send_all(c, first);
    send_all(c, second.substr(0, 30));  // the connection dies mid-line...
    // ...because the server itself goes away (QEMU restarted the chardev);
    // the listener first, so that the follower cannot reconnect to it.
    ::close(l);
    ::unlink(path.c_str());
    ::close(c);
    std::this_thread::sleep_for(300ms);
    l = listen_on(path);
    if (l < 0) {
      server_ok = false;
      return;
    }
    c = ::accept(l, nullptr, nullptr);
    send_all(c, "garbage\n" + second);
    std::this_thread::sleep_for(50ms);
    send_all(c, third.substr(0, 10));
    std::this_thread::sleep_for(50ms);
    send_all(c, third.substr(10));
    std::this_thread::sleep_for(200ms);
    ::close(c);
    ::close(l);
  });

  SocketFollower f(path, 50ms);
  std::vector<Event> got;
  auto end = f.run(std::chrono::steady_clock::now() + 10s, [&](Event const& e) {
    got.push_back(e);
    return e.step != Step::Ready;
  });
  server.join();
  REQUIRE(server_ok);
  REQUIRE(end);
  CHECK(*end == FollowEnd::Stopped);
  REQUIRE(got.size() == 3);
  CHECK(got[0].step == Step::Pull);
  CHECK(got[1].pull == PullProgress{5, 10});
  CHECK(got[2].phase == Phase::Starting);  // as sent: the follower does not interpret
  CHECK(got[2].step == Step::Ready);
  CHECK(f.connects() == 2);
  CHECK(f.bad_lines() == 1);  // "garbage"; the half line was forgotten, not counted
}

TEST_CASE("SocketFollower gives up at the deadline when nobody listens") {
  TempDir t{"readiness-sock"};
  SocketFollower f((t.path / "nobody.sock").string(), 20ms);
  auto start = std::chrono::steady_clock::now();
  auto end = f.run(start + 300ms, [](Event const&) { return true; });
  REQUIRE(end);
  CHECK(*end == FollowEnd::Deadline);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(f.connects() == 0);
  CHECK(f.last_error().find("nobody.sock") != std::string::npos);
}

TEST_CASE("SocketFollower refuses a path too long for a unix socket") {
  SocketFollower f("/tmp/" + std::string(200, 'a'));
  auto end = f.run(std::chrono::steady_clock::now() + 1s, [](Event const&) { return true; });
  REQUIRE_FALSE(end);
  CHECK(end.error().message.find("too long") != std::string::npos);
}
