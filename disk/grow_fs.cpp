#include "disk/grow_fs.hpp"

#include "common/process.hpp"

namespace cosmicac::disk {

std::vector<std::string> resize2fs_args(std::string const& device) {
  // No size: to the whole device. No -f: resize2fs's own checks stay on (it
  // refuses an unmounted filesystem not checked since its last mount; ours
  // is mounted, so it asks the kernel to grow it online).
  return {device};
}

Status grow_ext4(std::string const& device, std::chrono::milliseconds timeout) {
  auto res = run_command({.program = "resize2fs",
                          .args = resize2fs_args(device),
                          .description = "growing the ext4 on " + device,
                          .timeout = timeout});
  if (!res) return make_error(Reason::DiskGrow, "growing the ext4 on " + device + ": " + res.error().message);
  if (res->exit_code != 0) {
    std::string msg = res->err;
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (auto nl = msg.rfind('\n'); nl != std::string::npos) msg = msg.substr(nl + 1);
    return make_error(Reason::DiskGrow,
                      "growing the ext4 on " + device + ": resize2fs " +
                          (res->timed_out ? std::string("timed out") : "exited " + std::to_string(res->exit_code)) +
                          (msg.empty() ? "" : ": " + msg));
  }
  return ok();
}

}  // namespace cosmicac::disk
