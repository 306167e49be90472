#include "host/cluster/lease.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/base/rfc3339.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace cosmicac::host {
namespace {

using Clock = std::chrono::system_clock;

// The field manager of every write (the verbs' kFieldManager in
// host/verbs/request.hpp, which this layer cannot include: lease_test holds
// the two equal).
constexpr char kLeaseFieldManager[] = "cosmicac-vmi";

// The most attempts to take a Lease that keeps changing under us (another
// taker created or took it between our read and our write): the second read
// names the winner, so two are enough to answer at once.
constexpr int kAcquireAttempts = 2;

// The shortest leaseDurationSeconds: renewing every third of it must leave
// room for a request's round trip.
constexpr std::chrono::seconds kMinDuration{3};

// parse_rfc3339 drops the fraction of a MicroTime: a renewTime read that way
// is up to a second early, so a Lease is judged expired one second later than
// its text says (never taken a moment too soon).
constexpr std::chrono::seconds kFractionMargin{1};

HostError lease_api_error(std::string const& what, HttpResponse const& resp) {
  std::string const text = what + ": " + status_text(resp);
  switch (resp.status) {
    case 401: return host_error(Errc::Unauthorized, text);
    // No hint of ours: RBAC's denial names the user and the verb itself, and
    // an admission refusal is no missing grant (host/verbs/request.cpp's
    // forbidden_hint tells them apart for the verbs).
    case 403: return host_error(Errc::Forbidden, text);
    case 404: return host_error(Errc::NotFound, text);
    case 409: return host_error(Errc::Conflict, text);
    default: return host_error(Errc::Server, text, resp.status >= 500 || resp.status == 429);
  }
}

struct Holder {
  std::string identity;
  std::string since;  // acquireTime, else renewTime, as stored
  std::string renewed;
  std::optional<Clock::time_point> expires;  // none: no readable renewTime or duration
};

Holder holder_of(Json const& lease) {
  Holder h;
  h.identity = string_at(lease, {"spec", "holderIdentity"});
  h.renewed = string_at(lease, {"spec", "renewTime"});
  h.since = string_at(lease, {"spec", "acquireTime"}, h.renewed);
  Json const& seconds = value_at(lease, {"spec", "leaseDurationSeconds"});
  auto const renewed = parse_rfc3339(h.renewed.empty() ? h.since : h.renewed);
  if (renewed && seconds.is_number_integer() && seconds.get<long long>() > 0 &&
      *renewed < Clock::time_point::max() - std::chrono::hours(24 * 365))
    h.expires =
        *renewed + std::chrono::seconds(std::min(seconds.get<long long>(), 365LL * 24 * 3600)) + kFractionMargin;
  return h;
}

std::string lease_name(std::string const& ns, std::string const& name) {
  return "Lease " + terminal_safe(ns) + "/" + terminal_safe(name);
}

// The refusal's words: who, since when, and when it could be taken over.
HostError held_by(std::string const& what, Holder const& h, LeaseRefusal* refused) {
  if (refused) *refused = LeaseRefusal{h.identity, h.since};
  std::string msg = what + " is held by " + terminal_quoted(h.identity) + " since " +
                    terminal_safe(h.since.empty() ? "an unknown time" : h.since);
  if (h.expires)
    msg += " (last renewed " + terminal_safe(h.renewed) + "; it is taken over once its holder has not renewed it by " +
           format_rfc3339_micro(*h.expires) + ")";
  else
    msg +=
        " (with no readable renewTime or leaseDurationSeconds it never expires: if its holder is gone, delete "
        "the Lease)";
  return host_error(Errc::Conflict, msg);
}

// The Lease as a new holder takes it over: the object read (its
// resourceVersion with it), the holder, duration and times replaced, one more
// transition when it had a holder. managedFields are not sent back: the server
// keeps them.
Json taken_over(Json lease, std::string const& identity, std::chrono::seconds duration, std::string const& now,
                bool had_holder) {
  if (auto const* meta = find_at(lease, {"metadata"}); meta && meta->is_object())
    lease["metadata"].erase("managedFields");
  long long transitions = 0;
  if (Json const& t = value_at(lease, {"spec", "leaseTransitions"}); t.is_number_integer())
    transitions = t.get<long long>();
  if (!lease["spec"].is_object()) lease["spec"] = Json::object();
  lease["spec"]["holderIdentity"] = identity;
  lease["spec"]["leaseDurationSeconds"] = duration.count();
  lease["spec"]["acquireTime"] = now;
  lease["spec"]["renewTime"] = now;
  lease["spec"]["leaseTransitions"] = had_holder ? transitions + 1 : transitions;
  return lease;
}

Json new_lease(std::string const& ns, std::string const& name, std::string const& identity,
               std::chrono::seconds duration, std::string const& now) {
  Json lease;
  lease["apiVersion"] = api_version(api::kLeases);
  lease["kind"] = std::string(api::kLeases.kind);
  lease["metadata"] = {{"name", name}, {"namespace", ns}};
  lease["spec"] = {{"holderIdentity", identity},
                   {"leaseDurationSeconds", duration.count()},
                   {"acquireTime", now},
                   {"renewTime", now},
                   {"leaseTransitions", 0}};
  return lease;
}

}  // namespace

Result<std::unique_ptr<LeaseKeeper>> LeaseKeeper::acquire(KubeClient& client, std::string ns, std::string name,
                                                          std::string identity, std::chrono::seconds duration,
                                                          LeaseRefusal* refused) {
  std::string const what = lease_name(ns, name);
  if (duration < kMinDuration)
    return host_error(Errc::Usage, what + ": a lease duration of " + std::to_string(duration.count()) +
                                       " s is too short (at least " + std::to_string(kMinDuration.count()) + " s)");
  if (identity.empty()) return host_error(Errc::Usage, what + ": no holder identity");
  Query const write{{"fieldManager", kLeaseFieldManager}};
  auto path = api_path(api::kLeases, ns, name);
  if (!path) return path.error();
  auto put_path = api_path(api::kLeases, ns, name, {}, write);
  if (!put_path) return put_path.error();
  auto collection = api_path(api::kLeases, ns, {}, {}, write);
  if (!collection) return collection.error();

  for (int attempt = 0; attempt < kAcquireAttempts; ++attempt) {
    auto got = client.request("GET", *path);
    if (!got) return got.error();
    std::string const now = format_rfc3339_micro(Clock::now());
    if (got->status == 404) {
      // Nobody has it: create it. AlreadyExists means another taker created
      // it first: read again, which names them.
      auto created = client.request("POST", *collection, new_lease(ns, name, identity, duration, now).dump());
      if (!created) return created.error();
      if (created->status == 409) continue;
      if (created->status != 201 && created->status != 200) return lease_api_error("creating " + what, *created);
      auto body = parse_json(created->body);
      if (!body || !body->is_object())
        return host_error(Errc::Server, "creating " + what + ": the answer is no object");
      return std::unique_ptr<LeaseKeeper>(
          new LeaseKeeper(client, std::move(ns), std::move(name), std::move(identity), duration, std::move(*body)));
    }
    if (got->status != 200) return lease_api_error("reading " + what, *got);
    auto lease = parse_json(got->body);
    if (!lease || !lease->is_object()) return host_error(Errc::Server, "reading " + what + ": the answer is no object");
    Holder const h = holder_of(*lease);
    // Held, and not expired (or not known to expire): refused at once. The
    // same identity too: identities are per process, so a second process
    // that shares one must not hold the Lease beside the first.
    if (!h.identity.empty() && (!h.expires || Clock::now() <= *h.expires)) return held_by(what, h, refused);
    // Free (released to no one) or expired: take it over, naming the
    // resourceVersion just read, so of two takers only one wins.
    Json const take = taken_over(*lease, identity, duration, now, !h.identity.empty());
    auto put = client.request("PUT", *put_path, take.dump());
    if (!put) return put.error();
    if (put->status == 409) continue;  // another taker won: the next read names them
    if (put->status != 200) return lease_api_error("taking over " + what, *put);
    auto body = parse_json(put->body);
    if (!body || !body->is_object())
      return host_error(Errc::Server, "taking over " + what + ": the answer is no object");
    return std::unique_ptr<LeaseKeeper>(
        new LeaseKeeper(client, std::move(ns), std::move(name), std::move(identity), duration, std::move(*body)));
  }
  return host_error(Errc::Conflict, what + " changed on each of " + std::to_string(kAcquireAttempts) +
                                        " attempts to take it (other takers at work): not taken");
}

LeaseKeeper::LeaseKeeper(KubeClient& client, std::string ns, std::string name, std::string identity,
                         std::chrono::seconds duration, Json lease)
    : client_(client),
      ns_(std::move(ns)),
      name_(std::move(name)),
      identity_(std::move(identity)),
      duration_(duration),
      lease_(std::move(lease)),
      last_renewed_(std::chrono::steady_clock::now()) {
  acquired_at_ = string_at(lease_, {"spec", "acquireTime"});
  renewer_ = std::thread([this] { renew_loop(); });
}

LeaseKeeper::~LeaseKeeper() { (void)release(); }

std::string LeaseKeeper::describe() const { return lease_name(ns_, name_); }

std::string LeaseKeeper::lost_reason() const {
  std::lock_guard l(mu_);
  return lost_reason_;
}

void LeaseKeeper::mark_lost(std::string why) {
  {
    std::lock_guard l(mu_);
    if (lost_reason_.empty()) lost_reason_ = std::move(why);
  }
  lost_ = true;
}

void LeaseKeeper::renew_loop() {
  // A third of the duration: two renewals can fail before the Lease could
  // expire in anyone's eyes (client-go's leader election renews as often).
  auto const period = std::chrono::duration_cast<std::chrono::milliseconds>(duration_) / 3;
  std::unique_lock l(mu_);
  while (!stopping_ && !lost_) {
    if (wake_.wait_for(l, period, [this] { return stopping_; })) break;
    l.unlock();
    renew_once();
    l.lock();
  }
}

// One renewal: PUT the Lease as last written with a new renewTime. Runs on
// the renewer thread, without mu_ held during the requests (release() waits
// for it by joining).
void LeaseKeeper::renew_once() {
  auto const started = std::chrono::steady_clock::now();
  Json lease;
  {
    std::lock_guard l(mu_);
    lease = lease_;
  }
  std::string failure;
  for (int attempt = 0; attempt < 2; ++attempt) {
    RenewStep const step = renew_attempt(lease, started, failure);
    if (step == RenewStep::Done) return;
    if (step == RenewStep::Failed) break;
  }
  // Not renewed this time. Past two thirds of the duration since the last
  // renewal began, another taker could hold it by the next renewal: lost.
  auto const since = std::chrono::steady_clock::now() - last_renewed();
  if (since >= duration_ * 2 / 3)
    mark_lost(describe() + " was not renewed for " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since).count()) + " s" +
              (failure.empty() ? "" : ": " + failure));
}

std::chrono::steady_clock::time_point LeaseKeeper::last_renewed() const {
  std::lock_guard l(mu_);
  return last_renewed_;
}

// The two ends of a renewal step other than a retry: lost for good (said
// once, by mark_lost), or not renewed this time (`failure` says why).
LeaseKeeper::RenewStep LeaseKeeper::lost_step(std::string why) {
  mark_lost(std::move(why));
  return RenewStep::Done;
}

LeaseKeeper::RenewStep LeaseKeeper::failed_step(std::string& failure, std::string why) {
  failure = std::move(why);
  return RenewStep::Failed;
}

LeaseKeeper::RenewStep LeaseKeeper::renew_attempt(Json& lease, std::chrono::steady_clock::time_point started,
                                                  std::string& failure) {
  auto lost = [this](std::string why) { return lost_step(std::move(why)); };
  auto failed = [&failure](std::string why) { return failed_step(failure, std::move(why)); };
  auto put_path = api_path(api::kLeases, ns_, name_, {}, Query{{"fieldManager", kLeaseFieldManager}});
  if (!put_path) return lost(put_path.error().message);
  if (auto const* meta = find_at(lease, {"metadata"}); meta && meta->is_object())
    lease["metadata"].erase("managedFields");
  lease["spec"]["renewTime"] = format_rfc3339_micro(std::chrono::system_clock::now());
  auto put = client_.request("PUT", *put_path, lease.dump());
  if (!put) return failed(put.error().message);
  if (put->status == 200) {
    auto body = parse_json(put->body);
    if (!body || !body->is_object()) return failed("renewing " + describe() + ": the answer is no object");
    std::lock_guard l(mu_);
    lease_ = std::move(*body);
    last_renewed_ = started;
    return RenewStep::Done;
  }
  if (put->status == 404) return lost(describe() + " was deleted by someone else while held");
  if (put->status != 409) return failed(lease_api_error("renewing " + describe(), *put).message);
  return reread(lease, failure);
}

// After a 409: written by someone since our last write. Still ours (the same
// identity and acquireTime: someone only relabelled it) → renew that version;
// anyone else's → lost.
LeaseKeeper::RenewStep LeaseKeeper::reread(Json& lease, std::string& failure) {
  auto lost = [this](std::string why) { return lost_step(std::move(why)); };
  auto failed = [&failure](std::string why) { return failed_step(failure, std::move(why)); };
  auto path = api_path(api::kLeases, ns_, name_);
  if (!path) return lost(path.error().message);
  auto got = client_.request("GET", *path);
  if (!got) return failed(got.error().message);
  if (got->status == 404) return lost(describe() + " was deleted by someone else while held");
  auto fresh = got->status == 200 ? parse_json(got->body) : std::nullopt;
  if (!fresh || !fresh->is_object()) return failed(lease_api_error("reading " + describe(), *got).message);
  Holder const h = holder_of(*fresh);
  if (h.identity != identity_ || string_at(*fresh, {"spec", "acquireTime"}) != acquired_at_)
    return lost(describe() + " was taken over by " + terminal_quoted(h.identity) + " since " + terminal_safe(h.since));
  lease = std::move(*fresh);
  return RenewStep::Retry;
}

Status LeaseKeeper::release() {
  {
    std::lock_guard l(mu_);
    if (released_) return ok();
    released_ = true;
    stopping_ = true;
  }
  wake_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  if (lost_) return host_error(Errc::Conflict, describe() + " was lost before its release: " + lost_reason());
  std::string uid, version;
  {
    std::lock_guard l(mu_);
    uid = string_at(lease_, {"metadata", "uid"});
    version = string_at(lease_, {"metadata", "resourceVersion"});
  }
  auto path = api_path(api::kLeases, ns_, name_);
  if (!path) return path.error();
  Json options{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", Json::object()}};
  // Only the version this holder wrote last: a Lease taken over since is
  // someone else's, and stays.
  if (!uid.empty()) options["preconditions"]["uid"] = uid;
  if (!version.empty()) options["preconditions"]["resourceVersion"] = version;
  auto del = client_.request("DELETE", *path, options.dump());
  if (!del) return del.error();
  if (del->status == 200 || del->status == 202) return ok();
  if (del->status == 404) return host_error(Errc::Conflict, describe() + " was deleted by someone else while held");
  if (del->status == 409)
    return host_error(Errc::Conflict, describe() +
                                          " was written by someone else since its last renewal (taken "
                                          "over?): left as it is, not released");
  return lease_api_error("releasing " + describe(), *del);
}

}  // namespace cosmicac::host
