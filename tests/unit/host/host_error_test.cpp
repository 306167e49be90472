// The host's failure kinds and the one place they become exit statuses.
#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kubeconfig.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;

TEST_CASE("host_error: a usage or spec error exits 2, every other failure 1") {
  CHECK(exit_code(Errc::Usage) == 2);
  CHECK(exit_code(Errc::Spec) == 2);
  for (Errc k : {Errc::Kubeconfig, Errc::Unauthorized, Errc::Forbidden, Errc::NotFound, Errc::Invalid, Errc::Conflict,
                 Errc::Timeout, Errc::Server, Errc::Transport, Errc::Failed, Errc::Internal}) {
    INFO(errc_name(k));
    CHECK(exit_code(k) == 1);
  }
}

TEST_CASE("host_error: a guest Error crosses the boundary with its message and transience, in the kind given") {
  cosmicac::Result<int> guest = cosmicac::make_error(cosmicac::Reason::Internal, "no such socket", true);
  Result<int> host = from_guest(std::move(guest), Errc::Transport);
  REQUIRE_FALSE(host);
  CHECK(host.error().kind == Errc::Transport);
  CHECK(host.error().message == "no such socket");
  CHECK(host.error().transient);
  CHECK(from_guest(cosmicac::Result<int>(7), Errc::Transport).value() == 7);
}

TEST_CASE("host_error: value() on a failure throws the host's error") {
  Result<int> r = host_error(Errc::NotFound, "VirtualMachineInstance ns/x");
  CHECK_THROWS_AS(r.value(), HostErrorException);
}

TEST_CASE("host_error: a kubeconfig that is not YAML is a kubeconfig failure (exit 1), not a spec error (exit 2)") {
  CHECK(parse_yaml_or_json("a: [", "spec.yaml").error().kind == Errc::Spec);
  auto r = resolve_kubeconfig({KubeconfigFile{"/home/u/.kube/config", "a: ["}}, "");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == Errc::Kubeconfig);
  CHECK(exit_code(r.error().kind) == 1);
}
