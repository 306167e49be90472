#include "engine/containers.hpp"
#include "tests/unit/engine/fake_dockerd.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::engine;
using test::FakeDockerd;
using test::FakeResponse;

namespace {
Client client(FakeDockerd const& d) {
  Client c(ClientOptions{.socket_path = d.socket_path()});
  c.set_api_version("1.47");
  return c;
}
}  // namespace

TEST_CASE("inspect_container: id, string labels, state and health; absent is nullopt") {
  FakeDockerd d;
  d.script("GET", "/containers/web/json", {FakeResponse{.body = R"({"Id":"abc","Config":{"Labels":{"a":"1","n":2}},
              "State":{"Running":true,"Restarting":false,"Status":"running","ExitCode":0,
                       "StartedAt":"2026-11-22T14:14:19.5Z","Health":{"Status":"starting"}}})"}});
  auto c = client(d);
  auto r = inspect_container(c, "web");
  REQUIRE(r);
  REQUIRE(r->has_value());
  auto const& x = **r;
  CHECK(x.id == "abc");
  CHECK(x.labels == std::map<std::string, std::string>{{"a", "1"}});
  CHECK(x.state.running);
  CHECK_FALSE(x.state.restarting);
  CHECK(x.state.status == "running");
  CHECK(x.state.exit_code == 0);
  REQUIRE(x.state.started_at);
  CHECK(*x.state.started_at == *parse_docker_time("2026-11-22T14:14:19.500Z"));
  CHECK(x.state.health == std::optional<std::string>("starting"));

  d.script("GET", "/containers/web/json",
           {FakeResponse{.status = 404, .body = R"({"message":"No such container: web"})"}});
  auto absent = inspect_container(c, "web");
  REQUIRE(absent);
  CHECK_FALSE(absent->has_value());

  // Fields of the wrong type are left at their defaults, not thrown at.
  d.script(
      "GET", "/containers/web/json",
      {FakeResponse{
          .body =
              R"({"Id":"abc","State":{"Running":"yes","Status":5,"ExitCode":"3","StartedAt":"0001-01-01T00:00:00Z"}})"}});
  auto odd = inspect_container(c, "web");
  REQUIRE(odd);
  REQUIRE(odd->has_value());
  CHECK_FALSE((*odd)->state.running);
  CHECK((*odd)->state.status == "?");
  CHECK((*odd)->state.exit_code == -1);
  CHECK_FALSE((*odd)->state.started_at);  // Go's zero time: never started
  CHECK_FALSE((*odd)->state.health);

  d.script("GET", "/containers/web/json", {FakeResponse{.status = 500, .body = R"({"message":"boom"})"}});
  auto broken = inspect_container(c, "web");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().reason == Reason::ContainerError);
  CHECK(broken.error().message == "inspecting container web: HTTP 500: boom");
}

TEST_CASE("create_container: name in the query, the body as sent, the id and warnings") {
  FakeDockerd d;
  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Id":"new1","Warnings":["w1",3]})"}});
  auto c = client(d);
  auto r = create_container(c, "web", R"({"Image":"x"})");
  REQUIRE(r);
  CHECK(r->id == "new1");
  CHECK(r->warnings == std::vector<std::string>{"w1"});
  auto req = d.requests("POST", "/containers/create").at(0);
  CHECK(req.query.at("name") == "web");
  CHECK(req.body == R"({"Image":"x"})");

  d.script("POST", "/containers/create", {FakeResponse{.status = 201, .body = R"({"Warnings":[]})"}});
  auto no_id = create_container(c, "web", "{}");
  REQUIRE_FALSE(no_id);
  CHECK(no_id.error().message == "creating container web: no Id in the answer");

  d.script("POST", "/containers/create",
           {FakeResponse{.status = 404, .body = R"({"message":"No such image: x:latest"})"}});
  auto no_image = create_container(c, "web", "{}");
  REQUIRE_FALSE(no_image);
  CHECK(no_image.error().reason == Reason::ImageNotFound);
}

TEST_CASE("start, stop, remove: which statuses are success") {
  FakeDockerd d;
  auto c = client(d);
  d.script("POST", "/containers/i1/start",
           {FakeResponse{.status = 204}, FakeResponse{.status = 304},
            FakeResponse{.status = 404, .body = R"({"message":"No such container"})"}});
  CHECK(start_container(c, "i1", "web"));
  CHECK(start_container(c, "i1", "web"));  // already running
  auto gone = start_container(c, "i1", "web");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().reason == Reason::ContainerError);
  CHECK(gone.error().message == "starting container web: HTTP 404: No such container");

  d.script("POST", "/containers/i1/stop",
           {FakeResponse{.status = 204}, FakeResponse{.status = 304}, FakeResponse{.status = 404},
            FakeResponse{.status = 500, .body = R"({"message":"cannot stop"})"}});
  CHECK(stop_container(c, "i1", "web", 7));
  CHECK(d.requests("POST", "/containers/i1/stop").at(0).query.at("t") == "7");
  CHECK(stop_container(c, "i1", "web", 7));  // already stopped
  CHECK(stop_container(c, "i1", "web", 7));  // gone
  auto refused = stop_container(c, "i1", "web", 7);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "stopping container web: HTTP 500: cannot stop");
  CHECK(refused.error().transient);

  d.script("DELETE", "/containers/i1",
           {FakeResponse{.status = 204}, FakeResponse{.status = 404},
            FakeResponse{.status = 409, .body = R"({"message":"removal in progress"})"}});
  CHECK(remove_container(c, "i1"));
  CHECK(d.requests("DELETE", "/containers/i1").at(0).query.at("force") == "1");
  CHECK(remove_container(c, "i1"));  // already gone
  auto conflict = remove_container(c, "i1");
  REQUIRE_FALSE(conflict);
  CHECK(conflict.error().message == "removing container i1: HTTP 409: removal in progress");
}

TEST_CASE("a start dockerd refuses for want of a GPU driver is GpuUnavailable") {
  FakeDockerd d;
  d.script("POST", "/containers/i1/start",
           {FakeResponse{.status = 500,
                         .body = R"({"message":"could not select device driver \"\" with capabilities: [[gpu]]"})"}});
  auto c = client(d);
  auto st = start_container(c, "i1", "web");
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == Reason::GpuUnavailable);
}

TEST_CASE("container_log_tail: both streams, demultiplexed, the last n lines") {
  FakeDockerd d;
  std::string logs;
  for (int i = 1; i <= 4; ++i) {
    std::string const line = "line " + std::to_string(i) + "\n";
    std::string h(8, '\0');
    h[0] = i % 2 ? 1 : 2;
    h[7] = static_cast<char>(line.size());
    logs += h + line;
  }
  d.script("GET", "/containers/i1/logs", {FakeResponse{.body = logs}});
  auto c = client(d);
  auto r = container_log_tail(c, "i1", 3);
  REQUIRE(r);
  CHECK(*r == std::vector<std::string>{"line 2", "line 3", "line 4"});
  auto q = d.requests("GET", "/containers/i1/logs").at(0).query;
  CHECK(q.at("stdout") == "1");
  CHECK(q.at("stderr") == "1");
  CHECK(q.at("tail") == "3");

  d.script("GET", "/containers/i1/logs", {FakeResponse{.status = 404, .body = R"({"message":"No such container"})"}});
  CHECK_FALSE(container_log_tail(c, "i1", 3));
}

TEST_CASE("dockerd's times: nanoseconds kept, Go's zero time and garbage are nullopt") {
  using namespace std::chrono;
  auto t = parse_docker_time("2001-01-01T00:00:00.123456789Z");
  REQUIRE(t);
  CHECK(duration_cast<nanoseconds>(t->time_since_epoch()).count() % 1000000000 == 123456789);
  CHECK(system_clock::to_time_t(*t) == 978307200);
  CHECK_FALSE(parse_docker_time("0001-01-01T00:00:00Z"));
  CHECK_FALSE(parse_docker_time(""));
  CHECK_FALSE(parse_docker_time("yesterday"));
}
