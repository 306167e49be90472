#include "disk/ext4_tools.hpp"

#include "common/process.hpp"
#include "disk/facts.hpp"

namespace cosmicac::disk {

std::vector<std::string> mkfs_ext4_args(std::string const& device) {
  // lazy_itable_init/lazy_journal_init: the kernel zeroes inode tables and the
  // journal in the background after mount, so a multi-TiB disk formats in
  // seconds. nodiscard: a full-device discard on thin-provisioned storage can
  // take minutes and is pointless on a never-written disk.
  //
  // No -F, on purpose. mke2fs 1.47 (measured here) asks "Proceed anyway?" about
  // an existing signature only when stdin is a tty; with stdin on /dev/null it
  // overwrites any filesystem with or without -F. So -F would add no safety and
  // no capability: the guard is our own libblkid probe just before this call,
  // and without -F mke2fs still refuses a device that is mounted or in use.
  return {"-q", "-t", "ext4", "-L", kFilesystemLabel, "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", device};
}

namespace {

// One e2fsprogs tool on `device`: a failure names what was being done
// (`doing`), the tool, its exit (or timeout) and the last line it wrote.
Status run_ext4_tool(Reason reason, std::string const& doing, std::string const& program, std::vector<std::string> args,
                     std::string const& description, std::chrono::milliseconds timeout) {
  auto res = run_command({.program = program, .args = std::move(args), .description = description, .timeout = timeout});
  if (!res) return make_error(reason, doing + ": " + res.error().message);
  if (res->exit_code != 0) {
    std::string msg = res->err;
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (auto nl = msg.rfind('\n'); nl != std::string::npos) msg = msg.substr(nl + 1);
    return make_error(reason,
                      doing + ": " + program + " " +
                          (res->timed_out ? std::string("timed out") : "exited " + std::to_string(res->exit_code)) +
                          (msg.empty() ? "" : ": " + msg));
  }
  return ok();
}

}  // namespace

Status make_ext4(std::string const& device, std::chrono::milliseconds timeout) {
  return run_ext4_tool(Reason::DiskError, "formatting " + device, "mkfs.ext4", mkfs_ext4_args(device),
                       "formatting " + device + " as ext4", timeout);
}

std::vector<std::string> resize2fs_args(std::string const& device) {
  // No size: to the whole device. No -f: resize2fs's own checks stay on (it
  // refuses an unmounted filesystem not checked since its last mount; ours
  // is mounted, so it asks the kernel to grow it online).
  return {device};
}

Status grow_ext4(std::string const& device, std::chrono::milliseconds timeout) {
  std::string const doing = "growing the ext4 on " + device;
  return run_ext4_tool(Reason::DiskGrow, doing, "resize2fs", resize2fs_args(device), doing, timeout);
}

}  // namespace cosmicac::disk
