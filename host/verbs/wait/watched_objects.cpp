#include "host/verbs/wait/watched_objects.hpp"

namespace cosmicac::host {
namespace {

// A body kube-apiserver would send for an object that is not there.
HttpResponse not_found(ApiResource const& r, std::string const& name) {
  Json status{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"status", "Failure"},
              {"reason", "NotFound"},
              {"code", 404},
              {"message", std::string(r.plural) + (r.group.empty() ? "" : "." + std::string(r.group)) + " \"" + name +
                              "\" not found"}};
  return {404, status.dump()};
}

}  // namespace

HostError not_yet() { return host_error(Errc::Transport, "not listed yet", true); }

WatchedObjects::WatchedObjects(KubeClient& client, std::string ns, WaitOptions const& opts, std::function<void()> wake,
                               std::function<void(std::string const&)> notice)
    : client_(client), ns_(std::move(ns)), wake_(std::move(wake)), notice_(std::move(notice)) {
  ropts_.poll_interval = opts.interval;
  ropts_.backoff = opts.reconnect_delay;
  ropts_.backoff_cap = opts.reconnect_delay * 8;
  ropts_.keep = held_fields;
  ropts_.max_objects = opts.max_held_objects;
}

Result<HttpResponse> WatchedObjects::launcher_pods(VmiView const& vmi) const {
  if (!pods_) return not_yet();
  if (!pods_->synced()) {
    if (auto f = pods_->list_failure()) return *f;
    return not_yet();
  }
  Json list{{"kind", "PodList"}, {"items", Json::array()}};
  for (auto& p : pods_->items())
    if (is_launcher_of(p, vmi)) list["items"].push_back(std::move(p));
  return HttpResponse{200, list.dump()};
}

WatchedObjects::~WatchedObjects() { request_stop(); }

// A quiet watch notices its stop within about a second (libcurl's progress
// call): asked all at once, they end in about that time together.
void WatchedObjects::request_stop() {
  for (auto* r : {vmis_.get(), vms_.get(), dvs_.get(), pods_.get()})
    if (r) r->request_stop();
}

std::unique_ptr<Reflector> WatchedObjects::make(ApiResource const& r, Query selector) {
  return std::make_unique<Reflector>(client_, r, ns_, std::move(selector), ropts_, wake_, notice_);
}

void WatchedObjects::replace(std::unique_ptr<Reflector>& slot, ApiResource const& r, Query selector) {
  if (slot) {
    slot->request_stop();
    retired_.push_back(std::move(slot));
  }
  slot = make(r, std::move(selector));
}

Result<HttpResponse> WatchedObjects::object(Reflector const* from, ApiResource const& r, std::string const& name) {
  if (!from) return not_yet();
  if (!from->synced()) {
    if (auto f = from->list_failure()) return *f;
    return not_yet();
  }
  if (auto obj = from->get(name)) return HttpResponse{200, obj->dump()};
  return not_found(r, name);
}

}  // namespace cosmicac::host
