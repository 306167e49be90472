// lease-probe: host/cluster/lease.hpp's LeaseKeeper as a process, for the
// real-API suite's `lease_one_holder` case (tests/realapi/README.md) until a
// command of cosmicac-vmi (the rollout) holds the Lease itself. A test tool,
// never shipped.
//
//   lease-probe --kubeconfig FILE --namespace NS --name NAME --identity ID --duration SECONDS
//
// Prints "acquired <acquireTime>" and holds the Lease, renewing it, until
// stdin closes; then releases it and prints "released" (exit 0), or
// "release failed: …" (exit 1). While held, a line "lost: …" when lost() turns
// true. Refused: "refused holder=<holder> since=<since>: <message>" (exit 3);
// any other failure: "error: <message>" (exit 1).
#include "host/cluster/kube_client.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/cluster/lease.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

using namespace cosmicac::host;

namespace {

// Whether stdin has reached its end (the suite closes it to release).
bool stdin_closed(int timeout_ms) {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char buf[256];
  return ::read(STDIN_FILENO, buf, sizeof buf) <= 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, ns, name, identity;
  long duration = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const flag = argv[i], value = argv[i + 1];
    if (flag == "--kubeconfig") kubeconfig = value;
    else if (flag == "--namespace") ns = value;
    else if (flag == "--name") name = value;
    else if (flag == "--identity") identity = value;
    else if (flag == "--duration") duration = std::stol(value);
    else {
      std::cerr << "lease-probe: unknown flag " << flag << "\n";
      return 2;
    }
  }
  auto access = load_cluster_access(kubeconfig, "", KubeEnvironment::from_process());
  if (!access) {
    std::cout << "error: " << access.error().message << std::endl;
    return 1;
  }
  KubeClient client(std::move(*access));
  LeaseRefusal refused;
  auto keeper = LeaseKeeper::acquire(client, ns, name, identity, std::chrono::seconds(duration), &refused);
  if (!keeper) {
    if (keeper.error().kind == Errc::Conflict && !refused.holder.empty()) {
      std::cout << "refused holder=" << refused.holder << " since=" << refused.since << ": " << keeper.error().message
                << std::endl;
      return 3;
    }
    std::cout << "error: " << keeper.error().message << std::endl;
    return 1;
  }
  std::cout << "acquired " << (*keeper)->acquired_at() << std::endl;
  bool said_lost = false;
  while (!stdin_closed(100)) {
    if ((*keeper)->lost() && !said_lost) {
      std::cout << "lost: " << (*keeper)->lost_reason() << std::endl;
      said_lost = true;
    }
  }
  auto released = (*keeper)->release();
  if (!released) {
    std::cout << "release failed: " << released.error().message << std::endl;
    return 1;
  }
  std::cout << "released" << std::endl;
  return 0;
}
