#include "common/libmount_ptr.hpp"
#include "tests/unit/support/temp_dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fstream>
#include <string>
#include <vector>

using namespace cosmicac;
using cosmicac::test::TempDir;

// The deleters are what the sanitizer build's leak check watches: every object
// below is owned by a pointer and must be released exactly once.
TEST_CASE("libmount pointers own a table, its iterator, a new entry and a context") {
  TempDir t{"libmount-ptr"};
  auto const fstab = t.path / "fstab";
  std::ofstream(fstab) << "/dev/vda1 / ext4 defaults 0 1\nLABEL=data /data ext4 nofail 0 2\n";

  mnt::TablePtr tb(mnt_new_table());
  REQUIRE(tb);
  REQUIRE(mnt_table_parse_fstab(tb.get(), fstab.c_str()) == 0);
  {
    mnt::FsPtr line(mnt_new_fs());  // the table takes its own reference
    REQUIRE(line);
    REQUIRE(mnt_fs_set_target(line.get(), "/extra") == 0);
    REQUIRE(mnt_table_add_fs(tb.get(), line.get()) == 0);
  }
  std::vector<std::string> targets;
  mnt::IterPtr it(mnt_new_iter(MNT_ITER_FORWARD));
  REQUIRE(it);
  libmnt_fs* fs = nullptr;
  while (mnt_table_next_fs(tb.get(), it.get(), &fs) == 0) targets.emplace_back(mnt_fs_get_target(fs));
  CHECK(targets == std::vector<std::string>{"/", "/data", "/extra"});

  mnt::ContextPtr cxt(mnt_new_context());
  REQUIRE(cxt);
  CHECK(mnt_context_set_target(cxt.get(), "/data") == 0);
}
