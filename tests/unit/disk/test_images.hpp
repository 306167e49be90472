// Test support for disk/: temporary directories, sparse image files, real
// tools (mkfs, sfdisk, pvcreate, cryptsetup) run through run_command, loop
// devices, content hashes. A missing tool FAILS the test with its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cosmicac::disk::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;
  std::string const& path() const { return path_; }
  std::string operator/(std::string const& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A sparse file of `bytes` (zeros).
std::string make_sparse(std::string const& path, std::uint64_t bytes);

// Runs a real tool and REQUIREs exit 0; returns stdout.
std::string run_ok(std::string const& program, std::vector<std::string> const& args, std::string const& input = {});

// sha256 of a file's whole content (via sha256sum).
std::string content_hash(std::string const& path);

// A loop device over a file (losetup), detached on destruction.
class LoopDevice {
 public:
  explicit LoopDevice(std::string const& file, bool partscan = false);
  ~LoopDevice();
  LoopDevice(LoopDevice const&) = delete;
  LoopDevice& operator=(LoopDevice const&) = delete;
  std::string const& path() const { return path_; }     // /dev/loopN
  std::string name() const { return path_.substr(5); }  // loopN

 private:
  std::string path_;
};

// Writes `bytes` at `offset` of a file.
void write_at(std::string const& path, std::uint64_t offset, std::string const& bytes);

}  // namespace cosmicac::disk::test
