// The container's readiness probe (READY_PROBE, common/ready_probe.hpp): one look, as Kubernetes'
// httpGet and tcpSocket probes look at a pod, at the container's address on
// docker's network. The agent runs it until the first success before it says
// ready (container/converge.hpp), and `status` runs it again on every look
// after (agent/live_check.hpp).
#pragma once

#include "common/ready_probe.hpp"

#include <string>

namespace cosmicac::container {

// What a look is aimed at, for people: "http://172.17.0.2:8000/health" or "tcp://172.17.0.2:8000".
std::string probe_url(ReadyProbe const& probe, std::string const& address);

struct ProbeAnswer {
  bool passed = false;  // Http: 200-399 (as Kubernetes); Tcp: the connection was accepted
  std::string text;     // "HTTP 200", "HTTP 503", "connection refused", "no answer within 1 s", …
};

// One look (kind Http or Tcp), bounded by probe.timeout. An address that is not an IPv4
// literal is a failed look (nothing is resolved).
ProbeAnswer run_probe(ReadyProbe const& probe, std::string const& address);

}  // namespace cosmicac::container
