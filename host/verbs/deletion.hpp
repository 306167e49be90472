// Deleting one object and waiting until objects are gone: what `delete`
// does, and what `apply` does for --recreate, its roll-back and an object it
// finds being deleted.
#pragma once

#include "host/verbs/request.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace cosmicac::host {

inline constexpr const char* kForeground = "Foreground";
inline constexpr const char* kBackground = "Background";

// DELETE, by default with foreground propagation (the dependents go first),
// with a uid precondition when uid is given. True when the object is gone or
// going, false when it was absent.
Result<bool> delete_one(KubeClient& client, std::string const& object, std::string const& path, DryRun dry_run,
                        std::string const& uid, const char* propagation = kForeground);

// A Secret cannot be read (no get on secrets: that would read every Secret
// of the namespace), so whether one exists is asked with a server dry-run
// create of an empty Secret of that name: 409 AlreadyExists, or 201 (nothing
// is stored, and the reply is the empty Secret sent). The probe's body.
std::string secret_probe(std::string const& ns, std::string const& name);

// An object deleted, to wait for.
struct Pending {
  std::string object, path;
  std::string uid;         // what was deleted: an object of that name with another uid is a new one
  std::string probe_body;  // a Secret: path is its collection's dry-run create, probed by it (never GET)
};

// Polls until each object is 404 (or, a Secret, until a dry-run create of its
// name no longer conflicts). After `timeout`, an error naming what is left, its
// finalizers, and `hint` (what the caller's flags can do about it).
Status wait_gone(KubeClient& client, std::vector<Pending> pending, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds poll, Say const& say,
                 char const* hint = "--timeout waits longer; --wait=false does not wait");

}  // namespace cosmicac::host
