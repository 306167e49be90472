// The rollout's lock (host/cluster/lease.hpp) against the stand-in API server:
// taken when free, refused at once when held (naming who and since when),
// taken over once expired — by one of two takers only —, renewed while held,
// lost when someone else takes it or renewals fail, and released.
#include "host/cluster/lease.hpp"

#include "apiserver_standin.hpp"
#include "host/base/rfc3339.hpp"
#include "host/verbs/request.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <latch>
#include <thread>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr char const* kLeases = "/apis/coordination.k8s.io/v1/namespaces/cosmic-ac/leases";
std::string const kLease = std::string(kLeases) + "/cosmicac-rollout";

ClusterAccess access_to(test::ApiServerStandIn const& server) {
  ClusterAccess a;
  a.server = server.url();
  a.origin = "test";
  a.bearer_token = Secret(std::string("good-token"));
  return a;
}

std::string stamp(std::chrono::system_clock::time_point t) { return format_rfc3339_micro(t); }

// A Lease as another holder wrote it, renewed at `renewed`.
json held(std::string const& holder, std::chrono::system_clock::time_point renewed, std::string version = "500",
          int transitions = 3) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata",
           {{"name", "cosmicac-rollout"},
            {"namespace", "cosmic-ac"},
            {"uid", "uid-lease-1"},
            {"resourceVersion", version}}},
          {"spec",
           {{"holderIdentity", holder},
            {"leaseDurationSeconds", 15},
            {"acquireTime", "2026-11-28T09:00:00.000000Z"},
            {"renewTime", stamp(renewed)},
            {"leaseTransitions", transitions}}}};
}

host::Result<std::unique_ptr<LeaseKeeper>> take(KubeClient& client, std::string identity,
                                                std::chrono::seconds duration = 15s, LeaseRefusal* refused = nullptr) {
  return LeaseKeeper::acquire(client, "cosmic-ac", "cosmicac-rollout", std::move(identity), duration, refused);
}

std::size_t count_requests(test::ApiServerStandIn const& server, std::string const& prefix) {
  std::size_t n = 0;
  for (auto const& r : server.requests()) n += r.rfind(prefix, 0) == 0;
  return n;
}

template <class F>
bool within(std::chrono::milliseconds limit, F done) {
  auto const deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

}  // namespace

TEST_CASE("lease: a free namespace — the Lease is created with holder, duration and times; released, it is gone") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto const before = std::chrono::system_clock::now() - 1s;
  auto keeper = take(client, "alice@ws1 pid 42");
  if (!keeper) FAIL(keeper.error().message);
  json const lease = server.get(kLease);
  CHECK(lease["spec"]["holderIdentity"] == "alice@ws1 pid 42");
  CHECK(lease["spec"]["leaseDurationSeconds"] == 15);
  CHECK(lease["spec"]["leaseTransitions"] == 0);
  CHECK(lease["spec"]["acquireTime"] == lease["spec"]["renewTime"]);
  CHECK(parse_rfc3339(lease["spec"]["acquireTime"].get<std::string>()).value() >= before);
  CHECK((*keeper)->acquired_at() == lease["spec"]["acquireTime"]);
  // Every write under the verbs' field manager.
  CHECK(server.requests().at(1) == "POST " + std::string(kLeases) + "?fieldManager=" + std::string(kFieldManager));
  CHECK_FALSE((*keeper)->lost());
  auto released = (*keeper)->release();
  if (!released) FAIL(released.error().message);
  CHECK_FALSE(server.has(kLease));
  CHECK(server.requests().back() == "DELETE " + kLease);
  CHECK((*keeper)->release());  // again: nothing to do
  CHECK(server.requests().back() == "DELETE " + kLease);
}

TEST_CASE("lease: held by another and not expired — refused at once (Conflict) naming the holder and since when") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  server.put(kLease, held("bob@ws2 pid 7", std::chrono::system_clock::now() - 2s));
  LeaseRefusal refused;
  auto const started = std::chrono::steady_clock::now();
  auto keeper = take(client, "alice@ws1 pid 42", 15s, &refused);
  REQUIRE_FALSE(keeper);
  CHECK(std::chrono::steady_clock::now() - started < 2s);  // at once, no waiting for it
  CHECK(keeper.error().kind == Errc::Conflict);
  CHECK(keeper.error().message.find("Lease cosmic-ac/cosmicac-rollout is held by \"bob@ws2 pid 7\" since "
                                    "2026-11-28T09:00:00.000000Z") == 0);
  CHECK(keeper.error().message.find("taken over once its holder has not renewed it by") != std::string::npos);
  CHECK(refused.holder == "bob@ws2 pid 7");
  CHECK(refused.since == "2026-11-28T09:00:00.000000Z");
  CHECK(server.requests().size() == 1);  // one GET, no write
  CHECK(server.get(kLease)["spec"]["holderIdentity"] == "bob@ws2 pid 7");
}

TEST_CASE("lease: the same identity held elsewhere is refused too (identities are per process)") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  server.put(kLease, held("alice@ws1 pid 42", std::chrono::system_clock::now()));
  auto keeper = take(client, "alice@ws1 pid 42");
  REQUIRE_FALSE(keeper);
  CHECK(keeper.error().kind == Errc::Conflict);
}

TEST_CASE("lease: a holder's text reaches the terminal escaped") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  server.put(kLease, held("evil\x1b[2J\nholder", std::chrono::system_clock::now()));
  auto keeper = take(client, "alice");
  REQUIRE_FALSE(keeper);
  CHECK(keeper.error().message.find('\x1b') == std::string::npos);
  CHECK(keeper.error().message.find('\n') == std::string::npos);
  CHECK(keeper.error().message.find("\"evil\\x1b[2J\\nholder\"") != std::string::npos);
}

TEST_CASE("lease: an expired Lease is taken over — resourceVersion named, leaseTransitions + 1, new times") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  server.put(kLease, held("bob@ws2 pid 7", std::chrono::system_clock::now() - 20s));  // 15 s duration: gone 5 s ago
  auto keeper = take(client, "alice@ws1 pid 42", 6s);
  if (!keeper) FAIL(keeper.error().message);
  json const lease = server.get(kLease);
  CHECK(lease["spec"]["holderIdentity"] == "alice@ws1 pid 42");
  CHECK(lease["spec"]["leaseDurationSeconds"] == 6);
  CHECK(lease["spec"]["leaseTransitions"] == 4);
  CHECK(lease["spec"]["acquireTime"] != "2026-11-28T09:00:00.000000Z");
  CHECK(lease["metadata"]["uid"] == "uid-lease-1");  // the same object, updated
  CHECK(server.requests().at(1).rfind("PUT " + kLease + "?fieldManager=", 0) == 0);
  REQUIRE((*keeper)->release());
  CHECK_FALSE(server.has(kLease));
}

TEST_CASE("lease: a Lease released to no one (no holder) is taken without counting a transition") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  json free = held("", std::chrono::system_clock::now());
  server.put(kLease, free);
  auto keeper = take(client, "alice");
  if (!keeper) FAIL(keeper.error().message);
  CHECK(server.get(kLease)["spec"]["leaseTransitions"] == 3);
}

TEST_CASE("lease: a held Lease with no readable renewTime never expires — refused, saying to delete it") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  json odd = held("bob", std::chrono::system_clock::now() - 48h);
  odd["spec"].erase("leaseDurationSeconds");
  server.put(kLease, odd);
  auto keeper = take(client, "alice");
  REQUIRE_FALSE(keeper);
  CHECK(keeper.error().kind == Errc::Conflict);
  CHECK(keeper.error().message.find("never expires: if its holder is gone, delete the Lease") != std::string::npos);
}

TEST_CASE("lease: of two takers of one expired Lease the second write loses (409) and is refused naming the first") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto const now = std::chrono::system_clock::now();
  server.put(kLease, held("bob (dead)", now - 60s, "500"));
  // Between alice's read and her write, carol takes it over (a new resourceVersion).
  json carol = held("carol@ws3 pid 9", now, "501", 4);
  carol["spec"]["acquireTime"] = stamp(now);
  server.replace_after("GET " + kLease, kLease, carol);
  LeaseRefusal refused;
  auto keeper = take(client, "alice", 15s, &refused);
  REQUIRE_FALSE(keeper);
  CHECK(keeper.error().kind == Errc::Conflict);
  CHECK(refused.holder == "carol@ws3 pid 9");
  CHECK(refused.since == stamp(now));
  std::vector<std::string> methods;
  for (auto const& r : server.requests()) methods.push_back(r.substr(0, r.find(' ')));
  CHECK(methods == std::vector<std::string>{"GET", "PUT", "GET"});
  CHECK(server.get(kLease)["spec"]["holderIdentity"] == "carol@ws3 pid 9");
}

TEST_CASE("lease: two takers at once, from two threads — exactly one holds it, the other is refused naming it") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));  // shared, as the rollout shares it with its renewer
  bool const expired_first = GENERATE(false, true);
  if (expired_first) server.put(kLease, held("bob (dead)", std::chrono::system_clock::now() - 60s));
  std::latch start(2);
  host::Result<std::unique_ptr<LeaseKeeper>> a = host_error(Errc::Internal, "not run");
  host::Result<std::unique_ptr<LeaseKeeper>> b = host_error(Errc::Internal, "not run");
  LeaseRefusal ra, rb;
  std::thread ta([&] {
    start.arrive_and_wait();
    a = take(client, "alice", 15s, &ra);
  });
  std::thread tb([&] {
    start.arrive_and_wait();
    b = take(client, "bob", 15s, &rb);
  });
  ta.join();
  tb.join();
  REQUIRE(static_cast<bool>(a) != static_cast<bool>(b));
  std::string const winner = a ? "alice" : "bob";
  auto const& loser = a ? b : a;
  CHECK(loser.error().kind == Errc::Conflict);
  CHECK((a ? rb : ra).holder == winner);
  CHECK(server.get(kLease)["spec"]["holderIdentity"] == winner);
}

TEST_CASE("lease: renewed every third of its duration while held") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto keeper = take(client, "alice", 3s);
  if (!keeper) FAIL(keeper.error().message);
  std::string const first = server.get(kLease)["spec"]["renewTime"];
  std::string const acquired = server.get(kLease)["spec"]["acquireTime"];
  CHECK(within(5000ms, [&] { return count_requests(server, "PUT " + kLease) >= 2; }));
  json const lease = server.get(kLease);
  CHECK(lease["spec"]["renewTime"] != first);
  CHECK(lease["spec"]["acquireTime"] == acquired);  // renewing is not acquiring again
  CHECK(lease["spec"]["holderIdentity"] == "alice");
  CHECK_FALSE((*keeper)->lost());
  CHECK((*keeper)->lost_reason().empty());
  REQUIRE((*keeper)->release());  // the last renewal's resourceVersion: still ours
  CHECK_FALSE(server.has(kLease));
}

TEST_CASE("lease: taken over by someone else while held — lost(), and release leaves their Lease alone") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto keeper = take(client, "alice", 3s);
  if (!keeper) FAIL(keeper.error().message);
  server.put(kLease, held("mallory", std::chrono::system_clock::now(), "900"));
  CHECK(within(3000ms, [&] { return (*keeper)->lost(); }));
  CHECK((*keeper)->lost_reason().find("taken over by \"mallory\"") != std::string::npos);
  auto released = (*keeper)->release();
  REQUIRE_FALSE(released);
  CHECK(released.error().kind == Errc::Conflict);
  CHECK(released.error().message.find("was lost before its release") != std::string::npos);
  CHECK(server.get(kLease)["spec"]["holderIdentity"] == "mallory");
  CHECK(count_requests(server, "DELETE") == 0);
}

TEST_CASE("lease: deleted by someone else while held — lost()") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto keeper = take(client, "alice", 3s);
  if (!keeper) FAIL(keeper.error().message);
  KubeClient admin(access_to(server));
  REQUIRE(admin.request("DELETE", kLease)->status == 200);
  CHECK(within(3000ms, [&] { return (*keeper)->lost(); }));
  CHECK((*keeper)->lost_reason().find("deleted by someone else") != std::string::npos);
  CHECK_FALSE((*keeper)->release());
}

TEST_CASE("lease: renewals that keep failing — lost() within the duration, nothing deleted") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto keeper = take(client, "alice", 3s);
  if (!keeper) FAIL(keeper.error().message);
  server.fail_next(503, 1000);
  auto const failing = std::chrono::steady_clock::now();
  CHECK(within(4000ms, [&] { return (*keeper)->lost(); }));
  // Before another taker could see it expired (renewTime + 3 s + the 1 s margin).
  CHECK(std::chrono::steady_clock::now() - failing < 4s);
  CHECK((*keeper)->lost_reason().find("was not renewed for") != std::string::npos);
  CHECK((*keeper)->lost_reason().find("503") != std::string::npos);
  CHECK_FALSE((*keeper)->release());
  CHECK(count_requests(server, "DELETE") == 0);
}

TEST_CASE("lease: the destructor releases; a second taker then gets it at once") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  {
    auto keeper = take(client, "alice");
    if (!keeper) FAIL(keeper.error().message);
    CHECK_FALSE(take(client, "bob"));
  }
  CHECK_FALSE(server.has(kLease));
  auto bob = take(client, "bob");
  if (!bob) FAIL(bob.error().message);
  CHECK(server.get(kLease)["spec"]["holderIdentity"] == "bob");
}

TEST_CASE("lease: refused without a write — a too short duration, no identity, a forbidden create") {
  test::ApiServerStandIn server("Bearer good-token");
  KubeClient client(access_to(server));
  auto shortest = take(client, "alice", 2s);
  REQUIRE_FALSE(shortest);
  CHECK(shortest.error().kind == Errc::Usage);
  auto nobody = take(client, "");
  REQUIRE_FALSE(nobody);
  CHECK(nobody.error().kind == Errc::Usage);
  CHECK(server.requests().empty());
  server.deny("POST", kLeases);
  auto denied = take(client, "alice");
  REQUIRE_FALSE(denied);
  CHECK(denied.error().kind == Errc::Forbidden);
  CHECK(denied.error().message.find("creating Lease cosmic-ac/cosmicac-rollout: HTTP 403") == 0);
}
