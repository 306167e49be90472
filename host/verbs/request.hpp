// What the verbs share to talk to the API server: the REST paths of the
// objects they write, a failed call as an error, naming an object in
// messages, reading a reply, the query of every write, and whether an object
// is this job's. Each verb has its own header (apply.hpp, delete.hpp,
// list.hpp, wait/wait.hpp); this one is what they have in common.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/kube_client.hpp"

#include <functional>
#include <string>

namespace cosmicac::host {

// How a verb reports progress: the CLI prints it, tests collect it.
using Say = std::function<void(std::string const&)>;

// Every object's writes are recorded under this field manager (server-side
// apply's owner of the fields, and `fieldManager` on creates).
inline constexpr const char* kFieldManager = "cosmicac-vmi";

// REST paths for the kinds cosmicac-vmi renders (host/cluster/api_paths.hpp builds
// them: an invalid name is an error, not a path), with the query given.
Result<std::string> collection_path(Json const& object, Query const& query = {});
Result<std::string> object_path(Json const& object, Query const& query = {});
Result<std::string> vmi_path(std::string const& ns, std::string const& name);

// A failed API call as a HostError: 401 → Unauthorized, 403 → Forbidden, 404 of a collection → a
// missing API group, others with the server's Status message, reason and
// causes (field: message).
HostError api_error(std::string const& what, HttpResponse const& resp);

// What to add to a 403's message. kube-apiserver answers 403 Forbidden both when
// the authorizer denies (RBAC: `User "u" cannot create resource "r" ...`) and
// when admission refuses (a ValidatingAdmissionPolicy or webhook, a namespace
// being terminated, a quota plugin): only the first is fixed by the role.
std::string forbidden_hint(std::string const& status_message);

// "DataVolume cosmic-ac/job-root"
std::string describe(Json const& o);

// A reply's body as an object; anything else (no JSON, a list) as an empty one.
Json parse_body(HttpResponse const& resp);

// kubectl's --dry-run, the one type every layer passes: Client makes no API
// call at all (the CLI prints the objects); Server sends every write with
// dryRun=All, so the API server checks it and stores nothing.
enum class DryRun { None, Client, Server };

// Query strings: every write names its field manager and asks for strict
// field validation (as kubectl's default --validate=strict does); a
// server-side dry run adds dryRun=All to every write.
Query write_query(DryRun dry_run);

bool is_success(long status);

// The label the live object lacks to be this job's (job_labels in
// host/render/job_objects.hpp: every rendered object carries both; apply,
// delete and the roll-back act on nothing else), or empty when it is this job's.
std::string missing_label(Json const& live, std::string const& job);

// The refusal to act on an object that is not this job's; verb: "deletes".
HostError not_ours(std::string const& object, std::string const& label, char const* verb);

}  // namespace cosmicac::host
