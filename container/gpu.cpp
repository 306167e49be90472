#include "container/gpu.hpp"

#include "common/tool_dirs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

namespace cosmicac::container {
namespace {

// "/usr/local/sbin, /usr/local/bin, …, /sbin or /bin".
std::string tool_dirs_listed() {
  std::string out;
  for (std::size_t i = 0; i < kSystemToolDirs.size(); ++i) {
    if (i > 0) out += i + 1 == kSystemToolDirs.size() ? " or " : ", ";
    out += kSystemToolDirs[i];
  }
  return out;
}

}  // namespace

bool docker_serves_gpus(engine::SystemInfo const& info, bool hook_on_path) {
  if (hook_on_path) return true;  // dockerd registers its `nvidia` device driver
  for (auto const& runtime : info.runtimes)
    if (runtime == "nvidia") return true;
  for (auto const& id : info.cdi_device_ids)
    if (id.rfind("nvidia.com/gpu", 0) == 0) return true;
  return false;
}

bool nvidia_hook_installed(std::string const& fs_root) {
  std::string const root = fs_root == "/" ? "" : fs_root;
  for (auto const dir : kSystemToolDirs) {
    std::string const p = root + std::string(dir) + "/nvidia-container-runtime-hook";
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) return true;
  }
  return false;
}

Status check_gpus_ready(engine::SystemInfo const& docker_info, GpuEnv const& env) {
  auto const deadline = std::chrono::steady_clock::now() + env.wait;
  for (;;) {
    if (::access((env.dev_root + "/nvidiactl").c_str(), F_OK) == 0 ||
        ::access((env.dev_root + "/nvidia0").c_str(), F_OK) == 0)
      break;
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(Reason::GpuUnavailable, "no NVIDIA device node (" + env.dev_root + "/nvidiactl or " +
                                                    env.dev_root + "/nvidia0) appeared within " +
                                                    std::to_string(env.wait.count() / 1000) +
                                                    " s: is the NVIDIA driver installed and loaded?");
    std::this_thread::sleep_for(env.poll_interval);
  }
  if (!docker_serves_gpus(docker_info, nvidia_hook_installed(env.fs_root)))
    return make_error(Reason::GpuUnavailable,
                      "dockerd cannot serve GPUs: no nvidia-container-runtime-hook in " + tool_dirs_listed() +
                          ", and no nvidia runtime or CDI device in docker info (install nvidia-container-toolkit, "
                          "or set GPU_MODE=none)");
  return ok();
}

}  // namespace cosmicac::container
