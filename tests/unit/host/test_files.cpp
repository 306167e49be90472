#include "test_files.hpp"

#include "tests/unit/support/make_temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cosmicac::test {

std::string read_text(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(std::string const& path, std::string const& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
}

std::vector<std::string> example_specs() {
  std::vector<std::string> out;
  for (auto const& e : std::filesystem::directory_iterator(COSMICAC_SOURCE_DIR "/host/examples")) {
    auto ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) throw std::runtime_error("no example specs in host/examples");
  return out;
}

std::vector<std::string> fleet_specs() {
  std::vector<std::string> out;
  for (auto const& e : std::filesystem::directory_iterator(COSMICAC_SOURCE_DIR "/host/examples/fleet")) {
    auto ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) throw std::runtime_error("no example specs in host/examples/fleet");
  return out;
}

std::string schemas_dir() { return COSMICAC_SOURCE_DIR "/tests/data/kubevirt-schemas"; }
std::string golden_dir() { return COSMICAC_SOURCE_DIR "/tests/unit/host/golden"; }

TempDir::TempDir() { path = make_temp_dir("cosmicac-host-test").string(); }

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace cosmicac::test
