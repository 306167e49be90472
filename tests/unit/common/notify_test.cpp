#include "common/systemd_manager.hpp"

#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cosmicac;
using cosmicac::test::TempDir;

namespace {

// A NOTIFY_SOCKET of our own: a unix datagram socket, as systemd's manager
// binds one; the test reads what sd_notify sends there.
struct NotifySocket {
  int fd = -1;
  TempDir dir{"notify"};
  std::string saved;
  bool had = false;

  NotifySocket() {
    if (char const* old = std::getenv("NOTIFY_SOCKET")) had = true, saved = old;
    std::string const path = (dir.path / "notify").string();
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr const*>(&addr), sizeof addr) == 0);
    ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  }
  ~NotifySocket() {
    ::close(fd);
    if (had) ::setenv("NOTIFY_SOCKET", saved.c_str(), 1);
    else ::unsetenv("NOTIFY_SOCKET");
  }
  NotifySocket(NotifySocket const&) = delete;
  NotifySocket& operator=(NotifySocket const&) = delete;

  std::string receive() const {
    std::string buf(64 * 1024, '\0');
    ssize_t const n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    REQUIRE(n >= 0);
    buf.resize(static_cast<std::size_t>(n));
    return buf;
  }
};

// The manager's reading of a notification: assignments separated by '\n' or
// '\r' (systemd's strv_split_newlines splits on NEWLINE, "\n\r"), empty ones dropped.
std::vector<std::string> assignments(std::string const& datagram) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : datagram) {
    if (c == '\n' || c == '\r') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

// The attack: a container's log line (or a registry's error text) in the
// status adds assignments of its own: MAINPID= and READY=1 before the agent
// is ready.
TEST_CASE("notify: a status with newlines is one STATUS= assignment on the wire") {
  NotifySocket sock;
  systemd::notify_status("failed: ContainerExited: container x stopped\nMAINPID=1\nREADY=1\rSTOPPING=1");
  auto const fields = assignments(sock.receive());
  REQUIRE(fields.size() == 1);
  CHECK(fields[0] == "STATUS=failed: ContainerExited: container x stopped MAINPID=1 READY=1 STOPPING=1");

  systemd::notify_ready("ready: container x\nMAINPID=1\nERRNO=5");
  auto const ready = assignments(sock.receive());
  CHECK(ready == std::vector<std::string>{"READY=1", "STATUS=ready: container x MAINPID=1 ERRNO=5"});

  systemd::notify_failed(make_error(Reason::ContainerExited, "container x stopped\nREADY=1"));
  CHECK(assignments(sock.receive()) ==
        std::vector<std::string>{"STATUS=failed: container-exited: container x stopped READY=1"});
}

TEST_CASE("notify: the encoder leaves no control character and only valid UTF-8") {
  using systemd::notify_field;
  CHECK(notify_field("STATUS", "disk…") == "STATUS=disk…");
  CHECK(notify_field("STATUS", "a\tb\nc\rd") == "STATUS=a b c d");
  CHECK(notify_field("STATUS", std::string("a\0b\x1b[2J\x7f", 8)) == "STATUS=a?b?[2J?");
  CHECK(notify_field("STATUS",
                     "csi \xC2\x9B"
                     "31m, nbsp \xC2\xA0") == "STATUS=csi ?31m, nbsp \xC2\xA0");
  CHECK(notify_field("STATUS", "bad \xFF\xC0\xAF \xED\xA0\x80 \xE2\x82") == "STATUS=bad ??? ??? ??");
  CHECK(notify_field("STATUS", "caf\xC3\xA9 \xF0\x9F\x90\xB3") == "STATUS=caf\xC3\xA9 \xF0\x9F\x90\xB3");
}

TEST_CASE("notify: a long value is cut at a character boundary, within the bound") {
  using systemd::kNotifyValueMax;
  using systemd::notify_field;
  std::string const exact(kNotifyValueMax, 'x');
  CHECK(notify_field("STATUS", exact) == "STATUS=" + exact);
  std::string const value = std::string(kNotifyValueMax - 4, 'x') + "\xC3\xA9\xC3\xA9\xC3\xA9";
  std::string const out = notify_field("STATUS", value);
  CHECK(out.size() - 7 <= kNotifyValueMax);
  CHECK(out == "STATUS=" + std::string(kNotifyValueMax - 4, 'x') + "…");
  CHECK(notify_field("STATUS", std::string(1 << 20, '\n')).size() - 7 <= kNotifyValueMax);
}
