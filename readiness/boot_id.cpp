#include "readiness/boot_id.hpp"

#include "common/file_io.hpp"

#include <utility>

namespace cosmicac::readiness {

Result<std::string> read_boot_id(std::string const& path) {
  auto read = read_file(path, 128);  // a UUID and a newline
  if (!read) return read.error();
  std::string id = std::move(*read);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (id.empty()) return make_error(Reason::Internal, path + " is empty");
  return id;
}

}  // namespace cosmicac::readiness
