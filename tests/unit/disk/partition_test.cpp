#include "disk/partition.hpp"
#include "disk/classify.hpp"
#include "disk/probe.hpp"
#include "test_images.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::disk;
using namespace cosmicac::disk::test;

TEST_CASE("create_data_partition: a blank image becomes ours: GPT, one partition 1 MiB..end, named, Linux type") {
  TempDir dir;
  std::uint64_t const size = 256ULL << 20;
  auto img = make_sparse(dir / "disk.img", size);
  REQUIRE(create_data_partition(img));

  auto const facts = probe_content(img);
  REQUIRE(facts.probe_error.empty());
  CHECK(facts.table_type == "gpt");
  REQUIRE(facts.partitions.size() == 1);
  auto const& p = facts.partitions[0];
  CHECK(p.number == 1);
  CHECK(p.start_bytes == (1ULL << 20));
  CHECK(p.name == kPartitionName);
  CHECK(p.type == kLinuxFsTypeGuid);
  // To the end: only the backup GPT (33 sectors) and alignment may remain.
  CHECK(p.start_bytes + p.size_bytes <= size - 33 * 512);
  CHECK(p.start_bytes + p.size_bytes >= size - (1ULL << 20));
  CHECK(classify(facts).kind == ContentKind::Ours);

  // An independent reader (sfdisk) agrees.
  std::string const dump = run_ok("sfdisk", {"--dump", img});
  CHECK(dump.find("label: gpt") != std::string::npos);
  CHECK(dump.find("start=        2048") != std::string::npos);
  CHECK(dump.find("type=0FC63DAF-8483-4772-8E79-3D69D8477DE4") != std::string::npos);
  CHECK(dump.find("name=\"cosmicac-data\"") != std::string::npos);
}

TEST_CASE("create_data_partition names the device when it cannot write") {
  auto st = create_data_partition("/nonexistent/disk.img");
  REQUIRE_FALSE(st);
  CHECK(st.error().reason == cosmicac::Reason::DiskError);
  CHECK(st.error().message.find("/nonexistent/disk.img") != std::string::npos);
}
