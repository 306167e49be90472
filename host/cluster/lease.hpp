// One holder at a time: a coordination.k8s.io/v1 Lease taken, renewed from a
// thread of its own, and released — so that two operators' rollouts of the
// same namespace cannot interleave (issue 53). A Lease held by someone else is
// a refusal at once, naming the holder and since when; one whose holder
// stopped renewing it (renewTime + leaseDurationSeconds past) is taken over.
// Every write names the resourceVersion it read: of two takers of the same
// expired Lease, the API server lets one win and answers the other 409.
//
// Clocks: a Lease's expiry is judged on this host's clock against the
// renewTime the holder wrote with its own, as kubectl users' machines keep
// NTP time; a second of margin covers the fraction the reader drops. A holder
// whose clock runs far behind could lose its Lease to a taker early: lost()
// then says so, at its next renewal, and the caller stops.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/kube_client.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace cosmicac::host {

// Who holds a Lease that was refused, as the error's text says it too:
// holder (spec.holderIdentity) and since (spec.acquireTime, RFC 3339, as the
// server stored it; renewTime when the holder wrote no acquireTime).
struct LeaseRefusal {
  std::string holder;
  std::string since;
};

class LeaseKeeper {  // holds a coordination.k8s.io/v1 Lease; renews it from its own thread
 public:
  // Takes the Lease NS/NAME for `identity` (unique per process: a second
  // process with the same identity is refused like any other holder), creating
  // it when absent. Errc::Conflict, at once, when another holder's Lease has
  // not expired or another taker won the race (then `refused`, when given, is
  // filled); the API's error (Forbidden, Transport, …) otherwise. `duration`:
  // leaseDurationSeconds, at least 3 s; the Lease is renewed every third of it.
  static Result<std::unique_ptr<LeaseKeeper>> acquire(KubeClient& client, std::string ns, std::string name,
                                                      std::string identity, std::chrono::seconds duration,
                                                      LeaseRefusal* refused = nullptr);

  ~LeaseKeeper();  // release(), its failure ignored (best effort)
  LeaseKeeper(LeaseKeeper const&) = delete;
  LeaseKeeper& operator=(LeaseKeeper const&) = delete;

  // A renewal failed for long enough that another taker may hold it now (two
  // thirds of the duration without one), or someone else holds it now:
  // stop changing things. Never becomes false again.
  bool lost() const { return lost_.load(); }
  // Why lost() is true ("" while it is not).
  std::string lost_reason() const;

  // Stops renewing and deletes the Lease (preconditions: its uid and the
  // resourceVersion of this holder's last write, so a Lease someone else took
  // over is never deleted). ok when it was deleted, or already released;
  // Errc::Conflict when it had been lost (the reason in the message) or was
  // taken over meanwhile; the API's error when the delete failed (the Lease
  // then expires by itself after `duration`). Called again: ok, nothing done.
  Status release();

  std::string const& identity() const { return identity_; }
  std::string const& acquired_at() const { return acquired_at_; }  // spec.acquireTime as written

 private:
  LeaseKeeper(KubeClient& client, std::string ns, std::string name, std::string identity, std::chrono::seconds duration,
              Json lease);
  enum class RenewStep { Done, Retry, Failed };  // renewed or lost / write again / not renewed (failure says why)
  void renew_loop();
  void renew_once();
  RenewStep renew_attempt(Json& lease, std::chrono::steady_clock::time_point started, std::string& failure);
  RenewStep reread(Json& lease, std::string& failure);
  RenewStep lost_step(std::string why);
  static RenewStep failed_step(std::string& failure, std::string why);
  std::chrono::steady_clock::time_point last_renewed() const;
  void mark_lost(std::string why);
  std::string describe() const;  // "Lease NS/NAME"

  KubeClient& client_;  // shared with the caller's thread: the client allows it (one handle per request)
  std::string ns_, name_, identity_, acquired_at_;
  std::chrono::seconds duration_;

  mutable std::mutex mu_;
  Json lease_;  // the object as the server last answered a write of ours (its resourceVersion)
  std::chrono::steady_clock::time_point last_renewed_;
  std::string lost_reason_;
  bool stopping_ = false;
  bool released_ = false;
  std::condition_variable wake_;
  std::atomic<bool> lost_{false};
  std::thread renewer_;  // last: started once everything above is set
};

}  // namespace cosmicac::host
