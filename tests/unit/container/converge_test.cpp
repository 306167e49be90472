#include "container/converge.hpp"

#include "tests/unit/engine/fake_dockerd.hpp"
#include "tests/unit/support/http_answerer.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

using namespace cosmicac;
using namespace cosmicac::container;
using test::FakeDockerd;
using test::FakeResponse;
using json = nlohmann::json;

namespace {
ContainerSpec spec() {
  return ContainerSpec{.name = "cosmicac-container",
                       .image = "ghcr.io/a/b:v1",
                       .image_id = "sha256:1111",
                       .env = {"TOKENLIKE=hunter2"}};
}
engine::Client client(FakeDockerd const& d) {
  engine::Client c(engine::ClientOptions{.socket_path = d.socket_path()});
  c.set_api_version("1.47");
  return c;
}
ConvergeOptions fast() {
  return ConvergeOptions{.settle = std::chrono::milliseconds(150),
                         .health_timeout = std::chrono::milliseconds(500),
                         .poll_interval = std::chrono::milliseconds(30)};
}
std::string inspect(std::string const& id, bool running, json labels, std::string const& extra_state = "") {
  json j = {{"Id", id}, {"Config", {{"Labels", labels}}}};
  j["State"] =
      json::parse(R"({"Running":)" + std::string(running ? "true" : "false") + R"(,"Restarting":false,"Status":")" +
                  (running ? "running" : "exited") + R"(","ExitCode":)" + (running ? "0" : "3") + extra_state + "}");
  return j.dump();
}
json our_labels(ContainerSpec const& s) { return create_body(s).at("Labels"); }
void running_after_start(FakeDockerd& d, std::string const& id) {
  d.script("POST", "/containers/" + id + "/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/" + id + "/json", {FakeResponse{.body = inspect(id, true, json::object())}});
}
}  // namespace

TEST_CASE("absent: create with the desired body, then start and settle") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.status = 404, .body = R"({"message":"No such container"})"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"new1","Warnings":[]})"}});
  running_after_start(d, "new1");
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE(r);
  CHECK(r->action == Action::Create);
  CHECK(r->id == "new1");
  CHECK(r->image_id == "sha256:1111");
  auto create = d.requests("POST", "/containers/create").at(0);
  CHECK(create.query.at("name") == "cosmicac-container");
  CHECK(json::parse(create.body) == create_body(spec()));
  CHECK(d.count("POST", "/containers/new1/start") == 1);
  CHECK(d.count("GET", "/containers/new1/json") >= 2);  // polled through the settle period
}

TEST_CASE("same hash and running: unchanged, nothing touched") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.body = inspect("old1", true, our_labels(spec()))}});
  d.script("GET", "/containers/old1/json", {FakeResponse{.body = inspect("old1", true, json::object())}});
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE(r);
  CHECK(r->action == Action::Unchanged);
  CHECK(r->id == "old1");
  CHECK(d.count("POST", "/containers/create") == 0);
  CHECK(d.count("POST", "/containers/old1/start") == 0);
  CHECK(d.count("GET", "/containers/old1/json") == 1);  // one look: no settle period for what runs already
}

TEST_CASE("same hash but stopped: started, not recreated") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.body = inspect("old1", false, our_labels(spec()))}});
  running_after_start(d, "old1");
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE(r);
  CHECK(r->action == Action::Start);
  CHECK(d.count("POST", "/containers/create") == 0);
  CHECK(d.count("DELETE", "/containers/old1") == 0);
  CHECK(d.count("POST", "/containers/old1/start") == 1);
}

TEST_CASE("different hash: stop, remove, recreate; changed fields by name, values not logged") {
  test::LogCapture cap;
  FakeDockerd d;
  auto old = spec();
  old.image_id = "sha256:0000";
  old.env = {"TOKENLIKE=older-value"};
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.body = inspect("old1", true, our_labels(old))}});
  d.script("POST", "/containers/old1/stop", {FakeResponse{.status = 204}});
  d.script("DELETE", "/containers/old1", {FakeResponse{.status = 204}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"new2"})"}});
  running_after_start(d, "new2");
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE(r);
  CHECK(r->action == Action::Recreate);
  CHECK(r->changed == std::vector<std::string>{"Env:TOKENLIKE", "Image"});
  CHECK(d.count("POST", "/containers/old1/stop") == 1);
  CHECK(d.requests("DELETE", "/containers/old1").at(0).query.at("force") == "1");
  auto const all = d.requests();
  std::size_t i_del = 0, i_create = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].method == "DELETE") i_del = i;
    if (all[i].path == "/containers/create") i_create = i;
  }
  CHECK(i_del < i_create);
  std::string const logged = cap.text();
  CHECK(logged.find("Env:TOKENLIKE") != std::string::npos);
  CHECK(logged.find("hunter2") == std::string::npos);
  CHECK(logged.find("older-value") == std::string::npos);
}

TEST_CASE("a container with our name but no label of ours is replaced, with a warning") {
  test::LogCapture cap;
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.body = inspect("foreign", true, json::object())}});
  d.script("POST", "/containers/foreign/stop", {FakeResponse{.status = 204}});
  d.script("DELETE", "/containers/foreign", {FakeResponse{.status = 204}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"new3"})"}});
  running_after_start(d, "new3");
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE(r);
  CHECK(r->action == Action::Recreate);
  CHECK(r->changed == std::vector<std::string>{"(no label)"});
  CHECK(cap.text().find("not made by cosmicac-bootstrap") != std::string::npos);
}

TEST_CASE("a start that fails removes the half-created container") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"half"})"}});
  d.script("POST", "/containers/half/start",
           {FakeResponse{.status = 500,
                         .body = R"({"message":"could not select device driver \"\" with capabilities: [[gpu]]"})"}});
  d.script("DELETE", "/containers/half", {FakeResponse{.status = 204}});
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::GpuUnavailable);
  CHECK(d.count("DELETE", "/containers/half") == 1);
}

TEST_CASE("a create refused by dockerd is ContainerError naming the status") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create",
           {FakeResponse{.status = 400, .body = R"({"message":"invalid mount config"})"}});
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerError);
  CHECK(r.error().message.find("HTTP 400: invalid mount config") != std::string::npos);
}

TEST_CASE("exiting during the settle period: ContainerExited with the exit code and where to read its output") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"dies"})"}});
  d.script("POST", "/containers/dies/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/dies/json",
           {FakeResponse{.body = inspect("dies", true, json::object())},
            FakeResponse{.body = inspect("dies", false, json::object())}});
  d.script("GET", "/containers/dies/logs", {FakeResponse{.body = std::string("\x02\0\0\0\0\0\0\x0btoken=abc1\n", 19)}});
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message ==
        "container cosmicac-container stopped (exited) (exit code 3); its output: docker logs cosmicac-container");
  CHECK(d.count("GET", "/containers/dies/logs") == 0);  // the output is not even read
}

TEST_CASE("FAILURE_LOG_LINES: ContainerExited with the exit code and that many last log lines") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"dies"})"}});
  d.script("POST", "/containers/dies/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/dies/json",
           {FakeResponse{.body = inspect("dies", true, json::object())},
            FakeResponse{.body = inspect("dies", false, json::object())}});
  std::string logs;
  for (int i = 1; i <= 25; ++i) {
    std::string line = "line " + std::to_string(i) + "\n";
    std::string h(8, '\0');
    h[0] = i % 2 ? 1 : 2;
    h[7] = static_cast<char>(line.size());
    logs += h + line;
  }
  d.script("GET", "/containers/dies/logs", {FakeResponse{.body = logs}});
  auto c = client(d);
  ConvergeOptions o = fast();
  o.failure_log_lines = 20;
  auto r = converge_container(c, spec(), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message.find("exit code 3") != std::string::npos);
  CHECK(r.error().message.find("line 25") != std::string::npos);
  CHECK(r.error().message.find("line 6\n") != std::string::npos);
  CHECK(r.error().message.find("line 5\n") == std::string::npos);  // only the last 20
  auto q = d.requests("GET", "/containers/dies/logs").at(0).query;
  CHECK(q.at("tail") == "20");
  CHECK(q.at("stderr") == "1");
}

TEST_CASE("a HEALTHCHECK must report healthy; unhealthy fails") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"h1"})"}});
  d.script("POST", "/containers/h1/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/h1/json",
           {FakeResponse{.body = inspect("h1", true, json::object(), R"(,"Health":{"Status":"starting"})")},
            FakeResponse{.body = inspect("h1", true, json::object(), R"(,"Health":{"Status":"healthy"})")}});
  auto c = client(d);
  REQUIRE(converge_container(c, spec(), fast()));

  d.script("GET", "/containers/h1/json",
           {FakeResponse{.body = inspect("h1", true, json::object(), R"(,"Health":{"Status":"unhealthy"})")}});
  auto r = converge_container(c, spec(), fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message.find("unhealthy") != std::string::npos);
}

TEST_CASE("preflight: an unmounted bind source stops everything before create") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  auto s = spec();
  test::TempDir bare{"mnt-unmounted"};
  s.mount_point = bare.path.string();  // a bare directory: the data disk "did not mount"
  auto c = client(d);
  auto r = converge_container(c, s, fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerError);
  CHECK(d.count("POST", "/containers/create") == 0);
}

TEST_CASE("the settle period counts from the container's own start: long-running is settled at once") {
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json",
           {FakeResponse{.body = inspect("old1", false, our_labels(spec()))}});
  d.script("POST", "/containers/old1/start", {FakeResponse{.status = 304}});
  // dockerd restarted it at boot an hour ago (restart policy): nothing to wait for.
  d.script("GET", "/containers/old1/json",
           {FakeResponse{.body = inspect("old1", true, json::object(), R"(,"StartedAt":"2001-01-01T00:00:00.5Z")")}});
  auto c = client(d);
  auto o = fast();
  o.settle = std::chrono::seconds(30);  // polled every 30 ms: a wait would show as hundreds of GETs
  auto r = converge_container(c, spec(), o);
  REQUIRE(r);
  CHECK(r->action == Action::Start);
  CHECK(d.count("GET", "/containers/old1/json") == 1);
}

TEST_CASE("a container state with fields of unexpected types is read, not thrown at") {
  // dockerd's answer is untrusted input: the old reader's json::value() threw
  // type_error on "Restarting":"no" and never reported a reason.
  FakeDockerd d;
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"odd"})"}});
  d.script("POST", "/containers/odd/start", {FakeResponse{.status = 204}});
  d.script("GET", "/containers/odd/json",
           {FakeResponse{.body =
                             R"({"Id":"odd","State":{"Running":false,"Restarting":"no","Status":5,"ExitCode":"3"}})"}});
  auto c = client(d);
  auto r = converge_container(c, spec(), fast());
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message.find("stopped (?)") != std::string::npos);
  CHECK(r.error().message.find("exit code -1") != std::string::npos);
}

namespace {
// A container this run creates, running at 127.0.0.1 (the probe's target).
void created_running_at_loopback(FakeDockerd& d, std::string const& id, std::string const& health = "") {
  d.script("GET", "/containers/cosmicac-container/json", {FakeResponse{.status = 404, .body = "{}"}});
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":")" + id + R"("})"}});
  d.script("POST", "/containers/" + id + "/start", {FakeResponse{.status = 204}});
  json j = json::parse(inspect(id, true, json::object(), health));
  j["NetworkSettings"] = {{"IPAddress", ""}, {"Networks", {{"bridge", {{"IPAddress", "127.0.0.1"}}}}}};
  d.script("GET", "/containers/" + id + "/json", {FakeResponse{.body = j.dump()}});
}
ConvergeOptions probing(unsigned port, std::vector<std::string>* said) {
  ConvergeOptions o = fast();
  o.settle = std::chrono::seconds(30);  // must not be waited for: the probe decides
  o.health_timeout = std::chrono::milliseconds(1500);
  o.probe = ReadyProbe{.kind = ReadyProbe::Kind::Http, .port = port, .path = "/health"};
  o.probe_interval = std::chrono::milliseconds(20);
  o.on_progress = [said](std::string const& m) { said->push_back(m); };
  return o;
}
}  // namespace

TEST_CASE("READY_PROBE: refused, then 503 (a model loading), then 200: ready at the first pass, no settle period") {
  FakeDockerd d;
  created_running_at_loopback(d, "p1");
  test::HttpAnswerer server({503, 503, 200});
  std::vector<std::string> said;
  auto c = client(d);
  auto const t0 = std::chrono::steady_clock::now();
  auto r = converge_container(c, spec(), probing(server.port(), &said));
  REQUIRE(r);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));  // not the 30 s settle period
  CHECK(r->ip_address == "127.0.0.1");
  CHECK(server.connections() == 3);
  REQUIRE_FALSE(said.empty());
  std::string const url = "http://127.0.0.1:" + std::to_string(server.port()) + "/health";
  CHECK(said.front().starts_with("waiting for " + url + ": HTTP 503, "));
  CHECK(said.size() == 1);  // said again only when the answer changes (or every 30 s)
}

TEST_CASE("READY_PROBE never passing within HEALTH_TIMEOUT: container-unready naming the URL and the last answer") {
  FakeDockerd d;
  created_running_at_loopback(d, "p2");
  unsigned const port = test::HttpAnswerer::closed_port();
  std::vector<std::string> said;
  auto c = client(d);
  auto r = converge_container(c, spec(), probing(port, &said));
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerUnready);
  CHECK(r.error().message == "container cosmicac-container was not ready within 1 s: http://127.0.0.1:" +
                                 std::to_string(port) + "/health: Connection refused");
  REQUIRE(said.size() == 1);
  CHECK(said[0].find("Connection refused") != std::string::npos);
}

TEST_CASE("READY_PROBE: a container that stops while it loads is container-exited, not a probe timeout") {
  FakeDockerd d;
  created_running_at_loopback(d, "p3");
  json stopped = json::parse(inspect("p3", false, json::object()));
  d.script("GET", "/containers/p3/json", {FakeResponse{.body = stopped.dump()}});
  std::vector<std::string> said;
  auto c = client(d);
  auto r = converge_container(c, spec(), probing(test::HttpAnswerer::closed_port(), &said));
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ContainerExited);
  CHECK(r.error().message.find("exit code 3") != std::string::npos);
}

TEST_CASE("a HEALTHCHECK decides without a settle period; an unchanged container waits for it too") {
  FakeDockerd d;
  created_running_at_loopback(d, "h2", R"(,"Health":{"Status":"healthy"})");
  ConvergeOptions o = fast();
  o.settle = std::chrono::seconds(30);
  auto c = client(d);
  auto const t0 = std::chrono::steady_clock::now();
  REQUIRE(converge_container(c, spec(), o));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));

  FakeDockerd again;
  again.script("GET", "/containers/cosmicac-container/json",
               {FakeResponse{.body = inspect("old2", true, our_labels(spec()))}});
  again.script("GET", "/containers/old2/json",
               {FakeResponse{.body = inspect("old2", true, json::object(), R"(,"Health":{"Status":"starting"})")},
                FakeResponse{.body = inspect("old2", true, json::object(), R"(,"Health":{"Status":"healthy"})")}});
  auto c2 = client(again);
  auto r = converge_container(c2, spec(), o);
  REQUIRE(r);
  CHECK(r->action == Action::Unchanged);
  CHECK(again.count("GET", "/containers/old2/json") == 2);
}
