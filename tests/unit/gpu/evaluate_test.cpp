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
  m.xids = kernel_log_of_text(recorded("kmsg-healthy.txt")).xids;
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
  CHECK(v.wait_reason == Reason::GpuFabric);
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
  m.xids = kernel_log_of_text(recorded("kmsg-xid79.txt")).xids;
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
  m.xids = kernel_log_of_text(
               "4,1,2,-;NVRM: Xid (PCI:0000:0a:00): 13, Graphics Exception\n"
               "4,2,2,-;NVRM: Xid (PCI:0000:0a:00): 43, pid=1234, name=python3, Ch 00000008\n")
               .xids;
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
  CHECK(v.wait_reason == Reason::IbLink);  // a port, not a GPU, is what a wait that runs out names
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

namespace {

// `text` with every occurrence of `from` replaced by `to`.
std::string replaced(std::string text, std::string const& from, std::string const& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The recorded 8 x H100 VM with its -q answer rewritten by `edit`.
Measurements eight_with_q(std::string const& q) {
  auto m = healthy_vm();
  m.fabric = parse_fabric(q).value();
  return m;
}

std::string const kStateCompleted = "State                             : Completed";
std::string const kStatusSuccess = "Status                            : Success";

}  // namespace

TEST_CASE("fabric: the real lone H100 SXM (fabric N/A, Health rows N/A) is healthy; required, it is gpu-fabric") {
  Measurements m;
  m.gpus = parse_query_gpu(recorded("query-gpu-h100-alone.csv")).value();
  m.fabric = parse_fabric(recorded("smi-q-h100-alone.txt")).value();
  REQUIRE(m.fabric.size() == 1);
  CHECK(m.fabric[0].printed);
  CHECK(m.fabric[0].state == FabricState::NotSupported);
  CHECK(m.fabric[0].health_problem.empty());  // every Health row reads N/A: not a failure
  CHECK(evaluate({.gpus = 1}, m).outcome == Outcome::Healthy);
  CHECK(evaluate({}, m).outcome == Outcome::Healthy);
  auto const on = evaluate({.gpus = 1, .fabric = FabricRule::On}, m);
  REQUIRE(on.outcome == Outcome::Failed);
  CHECK(on.error().reason == Reason::GpuFabric);
  CHECK(on.error().message.find(
            "GPU 0 (00000000:00:06.0): NVLink fabric N/A, expected Completed with status Success: "
            "the fabric is required (FABRIC_REQUIRED=on); is Fabric Manager running on the host?") == 0);
}

TEST_CASE("fabric: an 8 x H100 SXM board whose every fabric reads N/A is gpu-fabric (Fabric Manager), not healthy") {
  auto const q = replaced(replaced(recorded("smi-q-fabric-completed.txt"), kStateCompleted, "State : N/A"),
                          kStatusSuccess, "Status : N/A");
  auto const m = eight_with_q(q);
  for (auto const& f : m.fabric) REQUIRE(f.state == FabricState::NotSupported);
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuFabric);
  CHECK(v.error().message.starts_with(
      "GPU 0 (00000000:0A:00.0): NVLink fabric N/A, expected Completed with status Success: the fabric is required "
      "(FABRIC_REQUIRED=auto: several NVSwitch GPUs); is Fabric Manager running on the host?"));
  CHECK(evaluate({.gpus = std::nullopt, .ib_devices = 8}, m).outcome == Outcome::Failed);  // 8 listed: still several
  CHECK(evaluate({.gpus = 8, .ib_devices = 8, .fabric = FabricRule::Off}, m).outcome == Outcome::Healthy);
}

TEST_CASE("fabric: an answer without Fabric sections (an older driver) fails where the fabric is required") {
  auto const m = eight_with_q(replaced(recorded("smi-q-fabric-completed.txt"), "    Fabric\n", "    Fabrik\n"));
  for (auto const& f : m.fabric) REQUIRE_FALSE(f.printed);
  auto const v = evaluate(kEight, m);
  REQUIRE(v.outcome == Outcome::Failed);
  CHECK(v.error().reason == Reason::GpuFabric);
  CHECK(v.error().message.find("NVLink fabric not printed by nvidia-smi -q") != std::string::npos);
  CHECK(evaluate({.gpus = 8, .ib_devices = 8, .fabric = FabricRule::Off}, m).outcome == Outcome::Healthy);
}

TEST_CASE("fabric: an unreadable -q answer is gpu-driver whatever the rule, never healthy") {
  for (auto rule : {FabricRule::Auto, FabricRule::On, FabricRule::Off}) {
    for (std::string const q : {"", "Failed to initialize NVML: Unknown Error\n", "GPU 00000000:0A:00.0\n"}) {
      auto const v = evaluate({.gpus = 8, .ib_devices = 8, .fabric = rule}, eight_with_q(q));
      REQUIRE(v.outcome == Outcome::Failed);
      CHECK(v.error().reason == Reason::GpuDriver);
      CHECK(v.error().message.find(": nvidia-smi -q has no section for it, expected one per GPU listed") !=
            std::string::npos);
    }
  }
}

TEST_CASE("fabric: a Health row Unhealthy, Limited Capacity or Degraded is gpu-fabric; N/A, Healthy, Full are not") {
  auto const completed = recorded("smi-q-fabric-completed.txt");
  for (std::string const row : {"Summary                       : Unhealthy", "Summary : Limited Capacity",
                                "Bandwidth                     : Degraded", "Route Unhealthy : True"}) {
    auto const q = replaced(completed, "Bandwidth                     : Full", row);
    auto const v = evaluate(kEight, eight_with_q(q));
    REQUIRE(v.outcome == Outcome::Failed);
    CHECK(v.error().reason == Reason::GpuFabric);
    CHECK(v.error().message.starts_with("GPU 0 (00000000:0A:00.0): NVLink fabric health "));
    CHECK(evaluate({.gpus = 8, .ib_devices = 8, .fabric = FabricRule::Off}, eight_with_q(q)).outcome ==
          Outcome::Failed);
  }
  for (std::string const row : {"Summary : N/A", "Summary : Healthy", "Route Unhealthy : False", "Bandwidth : N/A"})
    CHECK(evaluate(kEight, eight_with_q(replaced(completed, "Bandwidth                     : Full", row))).outcome ==
          Outcome::Healthy);
}

TEST_CASE("fabric: auto requires it for several NVSwitch GPUs of Hopper or later only") {
  for (auto const* name : {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", "NVIDIA H200", "NVIDIA H800", "NVIDIA H20",
                           "NVIDIA B200", "NVIDIA GB200", "NVIDIA B300 SXM6 AC", "NVIDIA GB300"})
    CHECK(nvswitch_product(name));
  for (auto const* name : {"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA H800 PCIe",
                           "NVIDIA A100-SXM4-80GB", "NVIDIA A800-SXM4-80GB", "NVIDIA GH200 480GB", "NVIDIA L40S",
                           "Tesla V100-SXM2-32GB", "NVIDIA H1000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"})
    CHECK_FALSE(nvswitch_product(name));
  // Every fabric N/A: a board of H100 PCIe cards or A100s (no fabric state) is healthy under auto.
  auto const q = replaced(replaced(recorded("smi-q-fabric-completed.txt"), kStateCompleted, "State : N/A"),
                          kStatusSuccess, "Status : N/A");
  for (auto const* name : {"NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB"}) {
    auto m = eight_with_q(q);
    for (auto& g : m.gpus) g.name = name;
    CHECK(evaluate(kEight, m).outcome == Outcome::Healthy);
    CHECK(evaluate({.gpus = 8, .ib_devices = 8, .fabric = FabricRule::On}, m).outcome == Outcome::Failed);
  }
  // One GPU expected and listed: not several.
  auto m = eight_with_q(q);
  m.gpus.resize(1);
  m.fabric.resize(1);
  CHECK(evaluate({.gpus = 1}, m).outcome == Outcome::Healthy);
  CHECK(evaluate({.gpus = 2}, m).outcome == Outcome::Failed);  // gpu-count, and the fabric required
}
