// After credentials -> login -> pull, no copy of the registry
// token, raw or inside the base64 X-Registry-Auth value, is left anywhere in
// this process's writable memory (heap, malloc arenas, stacks, .data/.bss).
// The fake dockerd runs in a forked child, so what it received is not ours.
#include "engine/system.hpp"
#include "registry/auth_header.hpp"
#include "registry/credentials.hpp"
#include "registry/pull.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <string.h>  // explicit_bzero
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::registry;
using test::FakeDockerd;
using test::FakeResponse;
using test::TempDir;

namespace {

// A secret kept only in a transformed form (each byte XOR kMask), so the
// needle itself is never a hit of the scan.
constexpr unsigned char kMask = 0xA5;
struct Needle {
  std::vector<unsigned char> masked;
  void set(std::string_view plain) {
    masked.clear();
    for (char c : plain) masked.push_back(static_cast<unsigned char>(c) ^ kMask);
  }
  std::string plain() const {  // for the child only
    std::string s;
    for (auto b : masked) s += static_cast<char>(b ^ kMask);
    return s;
  }
};

// Counts occurrences of the needle in [begin, end). Not instrumented: it reads
// freed blocks and redzones on purpose (that is where leftovers would be).
__attribute__((no_sanitize("address", "undefined"))) std::size_t count_in(const unsigned char* begin,
                                                                          const unsigned char* end, Needle const& n) {
  std::size_t hits = 0;
  std::size_t const len = n.masked.size();
  if (len == 0 || static_cast<std::size_t>(end - begin) < len) return 0;
  unsigned char const first = n.masked[0];
  for (const unsigned char* p = begin; p + len <= end; ++p) {
    if (static_cast<unsigned char>(*p ^ kMask) != first) continue;
    std::size_t i = 1;
    while (i < len && static_cast<unsigned char>(p[i] ^ kMask) == n.masked[i]) ++i;
    if (i == len) ++hits;
  }
  return hits;
}

struct Hits {
  std::size_t token = 0, header = 0;
  std::string where;  // mappings with hits, for the failure message
};

// Every private read-write mapping of this process. Mappings larger than
// 64 GiB are sanitizer shadow / reservations (ASan's high shadow is ~15 TiB of
// mostly unmapped-on-read pages), not program data: skipped.
Hits scan_own_memory(Needle const& token, Needle const& header) {
  Hits h;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  REQUIRE(maps != nullptr);
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  std::vector<std::string> names;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    int name_at = 0;
    if (std::sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &lo, &hi, perms, &name_at) < 3) continue;
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p') continue;
    std::string name = line + name_at;
    if (!name.empty() && name.back() == '\n') name.pop_back();
    if (name == "[vvar]" || name == "[vsyscall]") continue;
    if (hi - lo > (64UL << 30)) continue;
    ranges.emplace_back(lo, hi);
    names.push_back(name);
  }
  std::fclose(maps);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    auto const* b = reinterpret_cast<const unsigned char*>(ranges[i].first);
    auto const* e = reinterpret_cast<const unsigned char*>(ranges[i].second);
    std::size_t const t = count_in(b, e, token), x = count_in(b, e, header);
    h.token += t;
    h.header += x;
    if (t + x > 0)
      h.where += (names[i].empty() ? "[anon]" : names[i]) + " token " + std::to_string(t) + " header " +
                 std::to_string(x) + "; ";
  }
  return h;
}

void write_key(std::string const& path, const char* data, std::size_t n) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, data, n) == static_cast<ssize_t>(n));
  ::close(fd);
}

constexpr const char* kImageJson = R"({"Id":"sha256:1111","RepoDigests":["ghcr.io/acme/infer@sha256:abcd"]})";

// The fake dockerd's side, in the child: serves the flow, then says whether the
// token arrived in the /auth body and the X-Registry-Auth header was the one expected.
[[noreturn]] void serve_in_child(int ready_fd, int done_fd, Needle const& token, Needle const& header) {
  int code = 1;
  {
    FakeDockerd d;
    d.script_version("1.47", "1.24");
    d.script("POST", "/auth", {FakeResponse{.body = R"({"Status":"Login Succeeded"})"}});
    d.script("GET", "/images/ghcr.io/acme/infer:v1/json", {FakeResponse{.body = kImageJson}});
    d.script("POST", "/images/create",
             {FakeResponse{.chunks = {R"({"status":"Pulling from acme/infer","id":"v1"})"
                                      "\n",
                                      R"({"status":"Status: Downloaded newer image for ghcr.io/acme/infer:v1"})"
                                      "\n"}}});
    std::string const path = d.socket_path() + "\n";
    (void)!::write(ready_fd, path.data(), path.size());
    char c = 0;
    (void)!::read(done_fd, &c, 1);  // the parent closes it when done
    auto const auth = d.requests("POST", "/auth");
    auto const pulls = d.requests("POST", "/images/create");
    bool const login_ok = auth.size() == 1 && auth[0].body.find(token.plain()) != std::string::npos;
    bool const header_ok = pulls.size() == 1 && pulls[0].headers.count("x-registry-auth") == 1 &&
                           pulls[0].headers.at("x-registry-auth") == header.plain();
    code = login_ok && header_ok ? 0 : 3;
  }
  ::_exit(code);
}

// credentials -> login -> pull, as the agent does them; "" or what failed.
// The Credentials (and the token's Secret) die before it returns.
std::string login_and_pull(std::string const& dir, std::string const& socket) {
  auto creds = read_credentials(dir);
  if (!creds) return "read_credentials: " + creds.error().message;
  engine::Client client(engine::ClientOptions{.socket_path = socket,
                                              .low_speed_time = std::chrono::seconds(5),
                                              .request_timeout = std::chrono::seconds(10)});
  if (auto st = engine::negotiate(client); !st) return "negotiate: " + st.error().message;
  RetryPolicy const retry{.budget = std::chrono::seconds(1)};
  if (auto st = check_credentials(client, *creds, retry); !st) return "login: " + st.error().message;
  PullOptions o;
  o.retry = retry;
  auto pulled =
      pull_image(client, ImageToPull{.domain = "ghcr.io", .repository = "ghcr.io/acme/infer", .tag = "v1"}, &*creds, o);
  if (!pulled) return "pull: " + pulled.error().message;
  if (!pulled->pulled) return "pull: not pulled";
  return {};
}

}  // namespace

TEST_CASE("after login and pull, no copy of the token or of X-Registry-Auth is left in this process's memory") {
  TempDir dir{"token-wipe"};
  Needle token, header;
  {
    // A fresh random token, written straight to the key file and kept only masked.
    char raw[40];
    std::random_device rd;
    static constexpr char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (char& c : raw) c = alnum[rd() % (sizeof alnum - 1)];
    token.set(std::string_view(raw, sizeof raw));
    write_key((dir.path / "DOCKER_TOKEN").string(), raw, sizeof raw);
    explicit_bzero(raw, sizeof raw);
  }
  write_key((dir.path / "DOCKER_REGISTRY").string(), "ghcr.io\n", 8);
  write_key((dir.path / "DOCKER_USERNAME").string(), "acme\n", 5);
  {
    auto creds = read_credentials(dir.path.string());
    REQUIRE(creds.has_value());
    std::string h = registry_auth_header(*creds);
    std::string_view constexpr prefix = "X-Registry-Auth: ";
    REQUIRE(h.rfind(prefix, 0) == 0);
    header.set(std::string_view(h).substr(prefix.size()));
    wipe(h);
  }

  int ready[2], done[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(done) == 0);
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    ::close(done[1]);
    serve_in_child(ready[1], done[0], token, header);
  }
  ::close(ready[1]);
  ::close(done[0]);
  std::string socket;
  for (char c; ::read(ready[0], &c, 1) == 1 && c != '\n';) socket += c;
  ::close(ready[0]);
  REQUIRE_FALSE(socket.empty());

  // The flow runs on a thread of its own (glibc gives it its own malloc arena),
  // so what it leaves behind is not overwritten by this thread's later
  // allocations by luck: the scan sees what the flow left.
  std::string failure = "the flow did not run";
  std::thread flow([&] { failure = login_and_pull(dir.path.string(), socket); });
  flow.join();
  INFO(failure);
  REQUIRE(failure.empty());
  ::close(done[1]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("the fake dockerd must have received the token in /auth and the expected X-Registry-Auth (exit 0), got "
       << status);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));

  // The scan proves itself: a live copy is found.
  {
    std::string live = token.plain();
    CHECK(scan_own_memory(token, header).token >= 1);
    wipe(live);
  }
  Hits const h = scan_own_memory(token, header);
  INFO("left in memory: " << h.where);
  CHECK(h.token == 0);
  CHECK(h.header == 0);
}
