// The container's readiness probe (READY_PROBE): one look, as Kubernetes'
// httpGet and tcpSocket probes look at a pod, at the container's address on
// docker's network. The agent runs it until the first success before it says
// ready (container/converge.hpp), and `status` runs it again on every look
// after (agent/live_check.hpp).
#pragma once

#include <chrono>
#include <string>

namespace cosmicac::container {

struct Probe {
  enum class Kind { Http, Tcp };
  Kind kind = Kind::Http;
  unsigned port = 0;
  std::string path = "/";  // Http only: absolute, RFC 3986 characters (config checked it)
  std::chrono::milliseconds timeout{1000};
  std::chrono::milliseconds initial_delay{0};
};

// What a look is aimed at, for people: "http://172.17.0.2:8000/health" or "tcp://172.17.0.2:8000".
std::string probe_url(Probe const& probe, std::string const& address);

struct ProbeAnswer {
  bool passed = false;  // Http: 200-399 (as Kubernetes); Tcp: the connection was accepted
  std::string text;     // "HTTP 200", "HTTP 503", "connection refused", "no answer within 1 s", …
};

// One look, bounded by probe.timeout. An address that is not an IPv4
// literal is a failed look (nothing is resolved).
ProbeAnswer run_probe(Probe const& probe, std::string const& address);

}  // namespace cosmicac::container
