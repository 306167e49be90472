#include "gpu/evaluate.hpp"
#include "tests/unit/gpu/recorded.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac;
using namespace cosmicac::gpu;
using cosmicac::test::recorded;

namespace {

std::vector<IbDevice> ib_ports(std::vector<std::string> const& states) {
  std::vector<IbDevice> out;
  for (std::size_t i = 0; i < states.size(); ++i) {
    std::string const name = "mlx5_" + std::to_string(i);
    out.push_back({.name = name, .ports = {{.device = name, .port = 1, .state = parse_port_state(states[i])}}});
  }
  return out;
}

// The 8 x H100 SXM VM as recorded, healthy: 8 GPUs, fabric Completed, no Xid, 8 IB ports Active.
Measurements healthy_vm() {
  Measurements m;
  m.gpus = parse_query_gpu(recorded("query-gpu-healthy.csv")).value();
  m.fabric = parse_fabric(recorded("smi-q-fabric-completed.txt")).value();
  m.xids = xids_of_kmsg_text(recorded("kmsg-healthy.txt"));
  m.infiniband = ib_ports(std::vector<std::string>(8, "4: ACTIVE\n"));
  for (auto const& g : m.gpus) m.nvidia_pci.push_back(g.bus_id);
  return m;
}

Expected const kEight{.gpus = 8, .ib_devices = 8};

}  // namespace

TEST_CASE("gpu health: the healthy 8 x H100 VM is healthy") {
  auto const v = evaluate(kEight, healthy_vm());
  CHECK(v.outcome == Outcome::Healthy);
  CHECK(v.problems.empty());
}

TEST_CASE("gpu health: one GPU missing is gpu-count, naming expected, seen and the PCI device nvidia-smi misses") {
  auto m = healthy_vm();
  m.gpus = parse_query_gpu(recorded("query-gpu-one-missing.csv")).value();
  m.fabric.erase(m.fabric.begin() + 5);
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuCount);
  CHECK(v.error().message ==
        "expected 8 GPUs, nvidia-smi lists 7 (0, 1, 2, 3, 4, 5, 6); NVIDIA PCI device 0000:0f:00.0 is not among them");
  CHECK(evaluate({.gpus = 7, .ib_devices = std::nullopt}, m).outcome == Outcome::Healthy);
  CHECK(evaluate({}, m).outcome == Outcome::Healthy);  // no GPU_COUNT: no count check
}

TEST_CASE("gpu health: no GPU at all fails even without an expected count (the job asked for GPUs)") {
  Measurements m;
  auto const v = evaluate({}, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuCount);
  CHECK(v.error().message == "expected 1 GPU, nvidia-smi lists 0");
}

TEST_CASE("gpu health: fabric In Progress waits, naming the GPUs; once Completed it is healthy") {
  auto m = healthy_vm();
  m.fabric = parse_fabric(recorded("smi-q-fabric-in-progress.txt")).value();
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Wait);
  CHECK(v.waiting_for == "GPU 2 (00000000:0C:00.0) In Progress, GPU 5 (00000000:0F:00.0) In Progress");
  m.fabric = parse_fabric(recorded("smi-q-fabric-completed.txt")).value();
  CHECK(evaluate(kEight, m).outcome == Outcome::Healthy);
}

TEST_CASE("gpu health: fabric Completed with a failure status is gpu-fabric at once") {
  auto m = healthy_vm();
  m.fabric = parse_fabric(recorded("smi-q-fabric-failure.txt")).value();
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuFabric);
  CHECK(v.error().message ==
        "GPU 6 (00000000:10:00.0): NVLink fabric registration Completed with status \"Insufficient Resources\", "
        "expected Success (is Fabric Manager healthy on the host?)");
}

TEST_CASE("gpu health: a failure beats a wait (In Progress elsewhere does not hide a failed GPU)") {
  auto m = healthy_vm();
  m.fabric = parse_fabric(recorded("smi-q-fabric-in-progress.txt")).value();
  m.fabric.at(6).status = "Insufficient Resources";
  CHECK(evaluate(kEight, m).error().reason == Reason::GpuFabric);
}

TEST_CASE("gpu health: an uncorrectable ECC count is gpu-ecc naming the GPU, the count and the pending remap") {
  auto m = healthy_vm();
  m.gpus = parse_query_gpu(recorded("query-gpu-uncorrectable-ecc.csv")).value();
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuEcc);
  CHECK(v.error().message ==
        "GPU 3 (00000000:0D:00.0): 2 uncorrectable ECC errors since the driver loaded, expected 0; also "
        "GPU 3 (00000000:0D:00.0): a row remapping is pending until the GPU is reset, expected none");
}

TEST_CASE("gpu health: an Xid 79 in the kernel log is gpu-xid, and explains the missing GPU first") {
  auto m = healthy_vm();
  m.xids = xids_of_kmsg_text(recorded("kmsg-xid79.txt"));
  auto v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuXid);
  CHECK(
      v.error().message.starts_with("GPU 5 (00000000:0F:00.0): Xid 79 in the kernel log since boot "
                                    "(pid='<unknown>', name=<unknown>, GPU has fallen off the bus.)"));
  m.gpus = parse_query_gpu(recorded("query-gpu-one-missing.csv")).value();
  v = evaluate(kEight, m);
  CHECK(v.error().reason == Reason::GpuXid);
  CHECK(v.error().message.starts_with("GPU at 0000:0f:00: Xid 79"));
  CHECK(v.error().message.find("; also expected 8 GPUs, nvidia-smi lists 7") != std::string::npos);
}

TEST_CASE("gpu health: an Xid that is the application's fault (13, 31, 43) does not fail the VM") {
  auto m = healthy_vm();
  m.xids = xids_of_kmsg_text(
      "4,1,2,-;NVRM: Xid (PCI:0000:0a:00): 13, Graphics Exception\n"
      "4,1,2,-;NVRM: Xid (PCI:0000:0a:00): 43, pid=1234, name=python3, Ch 00000008\n");
  REQUIRE(m.xids.size() == 2);
  CHECK(evaluate(kEight, m).outcome == Outcome::Healthy);
}

TEST_CASE("gpu health: IB ports Down are ib-link naming device and port; INIT waits; fewer devices is ib-count") {
  auto m = healthy_vm();
  m.infiniband = ib_ports({"4: ACTIVE\n", "4: ACTIVE\n", "4: ACTIVE\n", "1: DOWN\n", "4: ACTIVE\n", "4: ACTIVE\n",
                           "4: ACTIVE\n", "1: DOWN\n"});
  auto v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::IbLink);
  CHECK(v.error().message ==
        "mlx5_3 port 1: state 1: DOWN, expected 4: ACTIVE; also "
        "mlx5_7 port 1: state 1: DOWN, expected 4: ACTIVE");
  CHECK(evaluate({.gpus = 8, .ib_devices = std::nullopt}, m).outcome == Outcome::Healthy);  // no IB_COUNT: not checked

  m.infiniband = ib_ports({"4: ACTIVE\n", "2: INIT\n"});
  v = evaluate({.gpus = 8, .ib_devices = 2}, m);
  REQUIRE(v.outcome == Outcome::Wait);
  CHECK(v.waiting_for == "mlx5_1 port 1 INIT");
  v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::IbCount);
  CHECK(v.error().message == "expected 8 InfiniBand devices, /sys/class/infiniband has 2 (mlx5_0, mlx5_1)");
}

TEST_CASE("gpu health: nvidia-smi failing is gpu-driver with its message; mixed drivers are gpu-driver") {
  Measurements m;
  m.driver = make_error(Reason::GpuDriver, "nvidia-smi exited with status 9: NVIDIA-SMI has failed");
  auto v = evaluate(kEight, m);
  CHECK(v.error().reason == Reason::GpuDriver);
  CHECK(v.error().message.starts_with("nvidia-smi exited with status 9"));
  m = healthy_vm();
  m.gpus.at(4).driver_version = "535.183.01";
  v = evaluate(kEight, m);
  CHECK(v.error().reason == Reason::GpuDriver);
  CHECK(v.error().message ==
        "GPU 4 (00000000:0E:00.0) runs driver 535.183.01, GPU 0 (00000000:0A:00.0) driver "
        "550.90.07: expected one driver for all GPUs");
}

TEST_CASE("gpu health: many problems give the first, the next two and a count") {
  auto m = healthy_vm();
  for (auto& g : m.gpus) g.remap_failure = true;
  auto const e = evaluate(kEight, m).error();
  CHECK(e.reason == Reason::GpuEcc);
  CHECK(e.message.ends_with("; and 5 more problems"));
}
