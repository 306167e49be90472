// The objects the jobs of one `wait` are made of, held by one watch per kind
// in the namespace (cluster/watch.hpp's Reflector): VirtualMachines, VMIs,
// DataVolumes, launcher pods. Internal to `wait` (host/verbs/wait/).
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/cluster/watch.hpp"
#include "host/verbs/views.hpp"
#include "host/verbs/wait/wait.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cosmicac::host {

// A collection not read yet: as if the server had not answered (skipped).
HostError not_yet();

// Each answer is in the shape a GET would have had, so a job reads its VMI,
// DataVolumes and launcher pod the same way whatever keeps them.
class WatchedObjects {
 public:
  // wake: a watch's thread, after each change to what it holds; notice: a
  // word about all the jobs (the cap on held objects reached).
  WatchedObjects(KubeClient& client, std::string ns, WaitOptions const& opts, std::function<void()> wake,
                 std::function<void(std::string const&)> notice);
  // Every watch asked to stop before any is joined: they end together.
  ~WatchedObjects();
  WatchedObjects(WatchedObjects const&) = delete;
  WatchedObjects& operator=(WatchedObjects const&) = delete;
  // Asks every watch to stop and returns at once (the destructor joins them).
  void request_stop();

  void watch_vmis(Query selector) { replace(vmis_, api::kVirtualMachineInstances, std::move(selector)); }
  void watch_vms(Query selector) { replace(vms_, api::kVirtualMachines, std::move(selector)); }
  void watch_datavolumes(Query selector) { replace(dvs_, api::kDataVolumes, std::move(selector)); }
  void watch_pods(Query selector) { replace(pods_, api::kPods, std::move(selector)); }
  bool watching_dependents() const { return dvs_ != nullptr; }
  Reflector const& vmis() const { return *vmis_; }
  Reflector const& vms() const { return *vms_; }

  Result<HttpResponse> vmi(std::string const& name) const {
    return object(vmis_.get(), api::kVirtualMachineInstances, name);
  }
  // A job's VirtualMachine (a bare VMI's job has none: 404, as has a
  // cluster, or a Role, without them: the list's failure).
  Result<HttpResponse> vm(std::string const& name) const { return object(vms_.get(), api::kVirtualMachines, name); }
  Result<HttpResponse> datavolume(std::string const& name) const { return object(dvs_.get(), api::kDataVolumes, name); }
  // A PodList of the launcher pods of this VMI (is_launcher_of).
  Result<HttpResponse> launcher_pods(VmiView const& vmi) const;
  KubeClient& client() const { return client_; }

 private:
  std::unique_ptr<Reflector> make(ApiResource const& r, Query selector);
  // A watch replaced (a new VMI's pods): the old one asked to stop and kept
  // until the end, so that the caller does not wait for its thread.
  void replace(std::unique_ptr<Reflector>& slot, ApiResource const& r, Query selector);
  static Result<HttpResponse> object(Reflector const* from, ApiResource const& r, std::string const& name);

  KubeClient& client_;
  std::string const ns_;
  std::function<void()> wake_;
  std::function<void(std::string const&)> notice_;
  ReflectorOptions ropts_;
  std::unique_ptr<Reflector> vmis_, vms_, dvs_, pods_;
  std::vector<std::unique_ptr<Reflector>> retired_;  // asked to stop; joined first
};

}  // namespace cosmicac::host
