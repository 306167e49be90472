#include "gpu/fabric.hpp"
#include "gpu/infiniband.hpp"
#include "gpu/pci_address.hpp"
#include "gpu/smi_query.hpp"
#include "gpu/xid.hpp"
#include "tests/unit/gpu/recorded.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>

using namespace cosmicac;
using namespace cosmicac::gpu;
using cosmicac::test::recorded;

TEST_CASE("a PCI address reads in nvidia-smi's, sysfs's and the Xid line's spellings, and they compare") {
  auto const smi = parse_pci_address("00000000:1B:00.0");
  auto const sysfs = parse_pci_address("0000:1b:00.0");
  auto const xid = parse_pci_address("0000:1b:00");
  REQUIRE(smi);
  REQUIRE(sysfs);
  REQUIRE(xid);
  CHECK(smi->same_device(*sysfs));
  CHECK(xid->same_device(*smi));
  CHECK_FALSE(xid->function);
  CHECK(smi->str() == "0000:1b:00.0");
  CHECK_FALSE(parse_pci_address("0000:1b:00.0 "));
  CHECK_FALSE(parse_pci_address("000:1b:00.0"));
  CHECK_FALSE(parse_pci_address("0000:1b:20.0"));  // device numbers stop at 0x1f
  CHECK_FALSE(parse_pci_address("0000:1b:00.8"));
  CHECK_FALSE(parse_pci_address("0000:1g:00.0"));
  CHECK_FALSE(parse_pci_address(""));
}

TEST_CASE("nvidia-smi --query-gpu of a healthy 8 x H100 reads as eight GPUs, [N/A] as no reading") {
  auto rows = parse_query_gpu(recorded("query-gpu-healthy.csv"));
  REQUIRE(rows);
  REQUIRE(rows->size() == 8);
  auto const& g = rows->at(5);
  CHECK(g.index == 5);
  CHECK(g.bus_id_text == "00000000:0F:00.0");
  CHECK(g.name == "NVIDIA H100 80GB HBM3");
  CHECK(g.driver_version == "550.90.07");
  CHECK(g.ecc_uncorrected == 0U);
  CHECK(g.remap_pending == false);
  CHECK(g.remap_failure == false);
  CHECK_FALSE(g.retired_pages_pending);  // [N/A] on Hopper: rows are remapped instead
}

TEST_CASE("the query asks for exactly the fields the parser reads, in csv without header or units") {
  auto const args = query_gpu_args();
  REQUIRE(args.size() == 2);
  CHECK(args[0] ==
        "--query-gpu=index,pci.bus_id,name,driver_version,ecc.errors.uncorrected.volatile.total,"
        "remapped_rows.pending,remapped_rows.failure,retired_pages.pending");
  CHECK(args[1] == "--format=csv,noheader,nounits");
}

TEST_CASE("a --query-gpu row reads [Not Supported], Yes and 1 as nvidia-smi prints them") {
  auto rows =
      parse_query_gpu("0, 00000000:0A:00.0, NVIDIA H100 80GB HBM3, 535.183.01, [Not Supported], Yes, 1, No\r\n");
  REQUIRE(rows);
  CHECK_FALSE(rows->at(0).ecc_uncorrected);
  CHECK(rows->at(0).remap_pending == true);
  CHECK(rows->at(0).remap_failure == true);
  CHECK(rows->at(0).retired_pages_pending == false);
}

TEST_CASE("a --query-gpu answer that does not read is a gpu-driver error naming the line and field, not the text") {
  auto const bad = [](std::string const& csv) {
    auto r = parse_query_gpu(csv);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == Reason::GpuDriver);
    return r.error().message;
  };
  CHECK(bad("0, 00000000:0A:00.0, NVIDIA H100, 550.90.07, 0, No, No\n") ==
        "nvidia-smi --query-gpu line 1: retired_pages.pending is missing");
  CHECK(bad("0, 00000000:0A:00.0, NVIDIA H100, 550.90.07, 0, No, No, No, 7\n").find("more fields") !=
        std::string::npos);
  CHECK(bad("x, 00000000:0A:00.0, NVIDIA H100, 550.90.07, 0, No, No, No\n").find("line 1: index") != std::string::npos);
  CHECK(bad("0, 00000000:0A:00.0, H, 550.90.07, 0, No, No, No\n0, 00000000:0B:00.0, H, 550.90.07, 0, No, No, No\n")
            .find("line 2: index repeats") != std::string::npos);
  CHECK(bad("0, secret-ish, H, 550.90.07, 0, No, No, No\n").find("secret") == std::string::npos);
  CHECK(bad("0, 00000000:0A:00.0, H, 550.90.07, many, No, No, No\n").find("ecc.errors") != std::string::npos);
  CHECK(bad("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n").find("line 1") !=
        std::string::npos);
  std::string many;
  for (int i = 0; i < 70; ++i) many += "\n";
  CHECK(bad(many).find("more than 64 lines") != std::string::npos);
}

TEST_CASE("the Fabric sections of nvidia-smi -q: Completed/Success, In Progress, and a failure status") {
  auto done = parse_fabric(recorded("smi-q-fabric-completed.txt"));
  REQUIRE(done);
  REQUIRE(done->size() == 8);
  for (auto const& f : *done) {
    CHECK(f.state == FabricState::Completed);
    CHECK(f.status == "Success");
  }
  CHECK(done->at(7).bus_id_text == "00000000:11:00.0");

  auto busy = parse_fabric(recorded("smi-q-fabric-in-progress.txt"));
  REQUIRE(busy);
  CHECK(busy->at(2).state == FabricState::InProgress);
  CHECK(busy->at(2).status == "N/A");
  CHECK(busy->at(3).state == FabricState::Completed);

  auto failed = parse_fabric(recorded("smi-q-fabric-failure.txt"));
  REQUIRE(failed);
  CHECK(failed->at(6).state == FabricState::Completed);
  CHECK(failed->at(6).status == "Insufficient Resources");
}

TEST_CASE("Fabric: only the section's own State and Status count, not other sections' or its subsections'") {
  std::string const q =
      "GPU 00000000:0A:00.0\n"
      "    Remapped Rows\n"
      "        Pending                           : Yes\n"
      "    Fabric\n"
      "        Health\n"
      "            State                         : Completed\n"
      "            Status                        : Success\n"
      "        State                             : Not Started\n"
      "    Processes                             : None\n"
      "        Status                            : Success\n"
      "GPU 00000000:0B:00.0\n"
      "    Product Name                          : NVIDIA A100-SXM4-80GB\n";
  auto f = parse_fabric(q);
  REQUIRE(f);
  REQUIRE(f->size() == 2);
  CHECK(f->at(0).state == FabricState::NotStarted);
  CHECK(f->at(0).status.empty());
  CHECK(f->at(1).state == FabricState::NotSupported);  // an older driver prints no Fabric section
  auto bad = parse_fabric("GPU banana\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "nvidia-smi -q line 1 names a GPU by something that is not a PCI address");
}

TEST_CASE("an InfiniBand port state reads as the kernel writes it") {
  auto s = parse_port_state("4: ACTIVE\n");
  REQUIRE(s);
  CHECK(s->code == 4);
  CHECK(s->name == "ACTIVE");
  CHECK(s->active());
  auto down = parse_port_state("1: DOWN\n");
  REQUIRE(down);
  CHECK_FALSE(down->active());
  CHECK_FALSE(parse_port_state("ACTIVE\n"));
  CHECK_FALSE(parse_port_state("4:ACTIVE\n"));
  CHECK_FALSE(parse_port_state("4: active\n"));
  CHECK_FALSE(parse_port_state("4: ACTIVE\nmore"));
}

TEST_CASE("InfiniBand devices and ports are read from <sysfs>/class/infiniband") {
  cosmicac::test::TempDir t{"ib-test"};
  namespace fs = std::filesystem;
  auto port = [&](std::string const& dev, std::string const& n, std::string const& state) {
    fs::create_directories(t.path / "class/infiniband" / dev / "ports" / n);
    std::ofstream(t.path / "class/infiniband" / dev / "ports" / n / "state") << state;
  };
  port("mlx5_1", "1", "1: DOWN\n");
  port("mlx5_0", "1", "4: ACTIVE\n");
  port("mlx5_0", "2", "garbage");
  auto ib = read_infiniband(t.path.string());
  REQUIRE(ib.size() == 2);
  CHECK(ib[0].name == "mlx5_0");
  REQUIRE(ib[0].ports.size() == 2);
  CHECK(ib[0].ports[0].state->active());
  CHECK_FALSE(ib[0].ports[1].state);
  CHECK(ib[1].ports[0].state->name == "DOWN");
  CHECK(read_infiniband((t.path / "nowhere").string()).empty());
}

TEST_CASE("an Xid reads from a kernel record, in today's and an older driver's spelling") {
  auto x = parse_kmsg_record(
      "4,1388,61234017,-;NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  REQUIRE(x);
  CHECK(x->code == 79);
  CHECK(x->seq == 1388);
  CHECK(x->gpu.same_device(*parse_pci_address("00000000:0F:00.0")));
  CHECK(x->detail == "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  auto d = parse_kmsg_record("3,7,61234017,-,caller=T12;NVRM: Xid (0000:18:00): 48, An uncorrectable double bit error");
  REQUIRE(d);
  CHECK(d->code == 48);
  CHECK_FALSE(parse_kmsg_record("4,1,2,-;NVRM: GPU 0000:0f:00.0: GPU has fallen off the bus."));
  CHECK_FALSE(parse_kmsg_record("4,1,2,-;NVRM: Xid (PCI:0000:0f:00): x, nothing"));
  CHECK_FALSE(parse_kmsg_record(" DEVICE=+pci:0000:0a:00.0 NVRM: Xid (PCI:0000:0f:00): 79, x"));
  CHECK_FALSE(parse_kmsg_record("4,x,2,-;NVRM: Xid (PCI:0000:0f:00): 79, x"));  // not a record's header
  CHECK(xid_needs_reset(79));
  CHECK(xid_needs_reset(48));
  CHECK_FALSE(xid_needs_reset(13));  // a graphics engine exception: the application's fault
}

// What a process in the container can put in the kernel log, with no privilege.
constexpr std::string_view kForgedInName =
    "6,1500,70000000,-;python3[4242]: segfault at 0 ip 00007f0000001000 sp 00007ffd00000000 error 4 in "
    "NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.[7f0000000000+1000]";

TEST_CASE("an Xid is the driver's record: never text inside another record, never a record from user space") {
  CHECK_FALSE(parse_kmsg_record(kForgedInName));  // a segfault report naming a crafted file
  // The process's own name (15 bytes at most) first: cannot begin a whole Xid.
  CHECK_FALSE(
      parse_kmsg_record("6,1501,70000001,-;NVRM: Xid (PCI:[4242]: segfault at 0 ip 0 sp 0 error 4 in "
                        "x): 79, GPU has fallen off the bus.[7f0000000000+1000]"));
  // Written to /dev/kmsg from user space: the kernel makes it facility user (1): prio 12 = 1 << 3 | 4.
  CHECK_FALSE(parse_kmsg_record("12,1502,70000002,-;NVRM: Xid (PCI:0000:0f:00): 79, GPU has fallen off the bus."));
  CHECK_FALSE(parse_kmsg_record("4,1503,70000003,-;audit: NVRM: Xid (PCI:0000:0f:00): 79, x"));
  CHECK_FALSE(parse_kmsg_record("4,1504,70000004,-; NVRM: Xid (PCI:0000:0f:00): 79, x"));
  auto const log =
      kernel_log_of_text(std::string(kForgedInName) + "\n12,1502,70000002,-;NVRM: Xid (PCI:0000:0f:00): 79, x\n");
  CHECK(log.xids.empty());
  CHECK(log.reset_count == 0);
}

TEST_CASE("the kernel log's Xids: 300 harmless Xids before a 79 hide nothing; every one is counted") {
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += "4," + std::to_string(i) + ",1000,-;NVRM: Xid (PCI:0000:0a:00): 13, Graphics Exception\n";
  text += "4,300,2000,-;NVRM: Xid (PCI:0000:0f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
  auto const log = kernel_log_of_text(text);
  CHECK(log.other_count == 300);
  CHECK(log.reset_count == 1);
  CHECK(log.xids.size() == 257);  // the first 256 harmless ones listed, and the 79
  REQUIRE(log.newest_reset);
  CHECK(log.newest_reset->code == 79);
  CHECK(log.newest_reset->seq == 300);
  CHECK(log.xids.back().code == 79);
  CHECK(log.first_seq == 0);
  CHECK(log.next_seq == 301);
  CHECK(log.missing_below == 0);
}

TEST_CASE("the kernel log's sequence: a ring that rotated, or a gap while reading, is said") {
  auto const rotated = kernel_log_of_text("6,5000,1,-;a\n 6,5001,2,-;dictionary lines are not records\n6,5001,2,-;b\n");
  CHECK(rotated.first_seq == 5000);
  CHECK(rotated.next_seq == 5002);
  CHECK(rotated.missing_below == 5000);  // 0 … 4999 gone
  CHECK(rotated.records == 2);
  auto const gap = kernel_log_of_text("6,0,1,-;a\n6,1,1,-;b\n6,9,2,-;c\n6,10,2,-;d\n");
  CHECK(gap.missing_below == 9);
  CHECK(kernel_log_of_text("6,0,1,-;a\n6,1,1,-;b\n").missing_below == 0);
}

TEST_CASE("the kernel log's Xids: none in a healthy boot, one 79 after a GPU fell off the bus") {
  auto const healthy = read_kernel_log(cosmicac::test::recorded_path("kmsg-healthy.txt"));
  CHECK(healthy.readable);
  CHECK(healthy.xids.empty());
  auto const log = read_kernel_log(cosmicac::test::recorded_path("kmsg-xid79.txt"));
  REQUIRE(log.xids.size() == 1);
  CHECK(log.xids[0].code == 79);
  CHECK(log.xids[0].seq == 1388);
  CHECK(log.next_seq == 1391);
  CHECK_FALSE(read_kernel_log("/nonexistent/kmsg").readable);
}
