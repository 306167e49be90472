// cosmicac-vmi: renders and applies the KubeVirt objects of one CosmicAC GPU
// VM (README, "cosmicac-vmi"). Exit status: 0 ok, 1 failure, 2 usage or spec
// error.
#include "common/log.hpp"
#include "host/verbs/doctor.hpp"
#include "host/base/duration.hpp"
#include "host/verbs/follow.hpp"
#include "host/spec/job_spec.hpp"
#include "host/cluster/kube_client.hpp"
#include "host/verbs/kube_ops.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/render/manifests.hpp"
#include "host/spec/operator_profile.hpp"
#include "host/render/userdata.hpp"
#include "host/verbs/wait_printer.hpp"
#include "host/base/yaml_json.hpp"
#include "readiness/event.hpp"
#include "readiness/terminal_text.hpp"
#include "readiness/socket_follower.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace cosmicac;
using namespace cosmicac::host;
// The host's own Result (HostError), not the agent's.
using cosmicac::host::Result;
using cosmicac::host::Status;

constexpr int kOk = 0, kFailure = 1;  // a failure's status comes from its kind (exit_code)

constexpr const char* kUsageText =
    "usage: cosmicac-vmi COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  render -f SPEC [-o yaml|json]   print the manifests (YAML stream, or a v1 List)\n"
    "  render-userdata -f SPEC         print only the cloud-init user-data\n"
    "  apply -f SPEC                   create or update the objects (server-side apply; the VMI's spec is\n"
    "                                  immutable: a difference is listed and exits 1) [--recreate: delete a\n"
    "                                  differing VMI and create it again] [--force-conflicts]\n"
    "                                  [--dry-run=client|server] [-o yaml|json] [--timeout 5m]\n"
    "  wait NAME [-n NS] | -f SPEC     follow the VMI, its DataVolume, launcher pod and the agent's events\n"
    "                                  (serial console log) until ready or failed [--timeout 20m]\n"
    "                                  [--schedule-timeout 5m] [--interval 5s] [--json: agent events as NDJSON]\n"
    "  wait --serial SOCKET [--json]   follow the agent's virtio-serial port (QEMU's host end) until ready\n"
    "  delete -f SPEC [--delete-data]  delete the VMI, its root DataVolume and user-data Secret, and wait\n"
    "                                  until they are gone [--wait=false] [--timeout 5m] [--dry-run=server];\n"
    "                                  the data PVC only with --delete-data\n"
    "  list [-n NS] [-o yaml|json]     the VMIs cosmicac-vmi manages: NAME PHASE READY NODE AGE GPUS STATUS\n"
    "  get NAME [-n NS] [-o yaml|json] one of them\n"
    "  doctor [-n NS] [-f SPEC | --gpu-type T --gpus N] [--json]\n"
    "                                  check the cluster is ready for these VMIs (exit 1 on any failed check)\n"
    "\n"
    "operator options (render, render-userdata, apply, wait, delete, doctor): --profile FILE: the operator\n"
    "  profile (root image, Secrets, ConfigMap, storage class, overlay network, allowed GPU types); a job\n"
    "  spec that sets one of these is refused (exit 2). Without it, the compiled-in defaults.\n"
    "cluster options (apply, wait, delete, list, get, doctor): --kubeconfig FILE, --context NAME\n"
    "  (else $KUBECONFIG, ~/.kube/config, or the in-cluster service account)\n"
    "  -n/--namespace NS: the namespace (with -f it must match the spec's, as kubectl requires)\n"
    "SPEC is a YAML or JSON job spec (see host/examples/); '-' reads stdin.\n"
    "exit status: 0 done, 1 failed (API error, VMI differs, timeout), 2 usage or spec error\n"
    "  --help, --version\n";

void say(std::string const& s) {
  std::fputs(s.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

int fail(int code, std::string const& msg) {
  std::fprintf(stderr, "cosmicac-vmi: %s\n", msg.c_str());
  return code;
}

// A failure, with the exit status its kind maps to.
int fail(HostError const& e) { return fail(exit_code(e.kind), e.message); }

int usage_error(std::string const& msg) {
  std::fprintf(stderr, "cosmicac-vmi: %s\n\n%s", msg.c_str(), kUsageText);
  return exit_code(Errc::Usage);
}

// Options: "--name value", "--name=value", "-f value"; flags; one positional.
struct Args {
  std::map<std::string, std::string> values;
  std::map<std::string, bool> flags;
  std::vector<std::string> positional;
};

std::optional<Args> parse_args(std::vector<std::string> const& argv, std::vector<std::string> const& value_opts,
                               std::vector<std::string> const& flag_opts, std::string& error) {
  Args a;
  auto is = [](std::vector<std::string> const& v, std::string const& s) {
    for (auto const& x : v)
      if (x == s) return true;
    return false;
  };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_inline = true;
    }
    if (is(value_opts, arg)) {
      if (!has_inline) {
        if (i + 1 >= argv.size()) { error = arg + " needs a value"; return std::nullopt; }
        value = argv[++i];
      }
      a.values[arg] = value;
    } else if (is(flag_opts, arg) && !has_inline) {
      a.flags[arg] = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      error = "unknown option " + arg;
      return std::nullopt;
    } else {
      a.positional.push_back(arg);
    }
  }
  return a;
}

std::string opt(Args const& a, std::string const& key) {
  auto it = a.values.find(key);
  return it == a.values.end() ? "" : it->second;
}

std::string spec_path(Args const& a) {
  std::string f = opt(a, "-f");
  return f.empty() ? opt(a, "--filename") : f;
}

// The operator's profile (--profile FILE), else the compiled-in defaults.
Result<OperatorProfile> operator_profile(Args const& a) {
  std::string const path = opt(a, "--profile");
  if (path.empty()) return OperatorProfile();
  return load_operator_profile(path);
}

// The tenant's job spec (-f) with the operator's names from the profile.
Result<JobSpec> load_spec(Args const& a) {
  auto profile = operator_profile(a);
  if (!profile) return profile.error();
  return load_renderable_spec(spec_path(a), *profile);
}

Result<ClusterAccess> cluster(Args const& a) {
  return load_cluster_access(opt(a, "--kubeconfig"), opt(a, "--context"), KubeEnvironment::from_process());
}

std::string namespace_flag(Args const& a) {
  std::string n = opt(a, "-n");
  return n.empty() ? opt(a, "--namespace") : n;
}

// kubectl's rule for objects from a file: -n may only repeat the namespace
// the object names. Empty: fine; else the usage error.
std::string namespace_conflict(Args const& a, JobSpec const& spec) {
  std::string n = namespace_flag(a);
  if (n.empty() || n == spec.ns) return {};
  return "the namespace from the provided object \"" + spec.ns + "\" does not match the namespace \"" + n +
         "\". You must pass '--namespace=" + spec.ns + "' to perform this operation.";
}

std::string output_format(Args const& a) {
  std::string o = opt(a, "-o");
  return o.empty() ? opt(a, "--output") : o;
}

// JSON with every non-ASCII character escaped (a terminal sees no raw C1 or
// bidi control from the API server), or YAML (ASCII-only writer).
std::string format_objects(Json const& value, std::string const& format) {
  if (format == "json") return value.dump(2, ' ', true) + "\n";
  return to_yaml(value);
}

// kubectl's bool flags take "--wait" or "--wait=false"; a bare --dry-run means client.
std::vector<std::string> normalize_flags(std::vector<std::string> argv) {
  for (auto& a : argv) {
    if (a == "--wait") a = "--wait=true";
    if (a == "--dry-run") a = "--dry-run=client";
  }
  return argv;
}

int cmd_render(std::vector<std::string> const& argv, bool userdata_only) {
  std::string err;
  auto a = parse_args(argv, {"-f", "--filename", "-o", "--output", "-n", "--namespace", "--profile"}, {}, err);
  if (!a) return usage_error(err);
  if (spec_path(*a).empty()) return usage_error("-f SPEC is required");
  if (!a->positional.empty()) return usage_error("unexpected argument " + a->positional[0]);
  std::string format = opt(*a, "-o").empty() ? opt(*a, "--output") : opt(*a, "-o");
  if (format.empty()) format = "yaml";
  if (format != "yaml" && format != "json") return usage_error("-o must be yaml or json");
  if (userdata_only && !opt(*a, "-o").empty()) return usage_error("render-userdata takes no -o");

  auto spec = load_spec(*a);
  if (!spec) return fail(spec.error());
  if (auto conflict = namespace_conflict(*a, *spec); !conflict.empty()) return fail(host_error(Errc::Usage, conflict));
  if (userdata_only) {
    std::fputs(render_userdata(*spec).c_str(), stdout);
    return kOk;
  }
  auto objects = render_manifests(*spec);
  std::string out = format == "json" ? as_list(objects).dump(2) + "\n" : to_yaml_stream(objects);
  std::fputs(out.c_str(), stdout);
  return kOk;
}

int cmd_apply(std::vector<std::string> const& argv) {
  std::string err;
  auto a = parse_args(normalize_flags(argv),
                      {"-f", "--filename", "--kubeconfig", "--context", "-n", "--namespace", "--dry-run", "-o",
                       "--output", "--timeout", "--profile"},
                      {"--recreate", "--force-conflicts"}, err);
  if (!a) return usage_error(err);
  if (spec_path(*a).empty()) return usage_error("-f SPEC is required");
  if (!a->positional.empty()) return usage_error("unexpected argument " + a->positional[0]);
  std::string const dry = opt(*a, "--dry-run");
  if (!dry.empty() && dry != "none" && dry != "client" && dry != "server")
    return usage_error("--dry-run must be none, client or server");
  std::string const format = output_format(*a);
  if (!format.empty() && format != "yaml" && format != "json") return usage_error("-o must be yaml or json");
  ApplyOptions options;
  options.dry_run = dry == "client" ? DryRun::Client : dry == "server" ? DryRun::Server : DryRun::None;
  options.recreate = a->flags.count("--recreate") > 0;
  options.force_conflicts = a->flags.count("--force-conflicts") > 0;
  if (!opt(*a, "--timeout").empty()) {
    auto d = parse_duration(opt(*a, "--timeout"));
    if (!d) return usage_error(std::string("--timeout: ") + d.error().message);
    options.delete_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  auto spec = load_spec(*a);
  if (!spec) return fail(spec.error());
  if (auto conflict = namespace_conflict(*a, *spec); !conflict.empty()) return fail(host_error(Errc::Usage, conflict));
  auto objects = render_manifests(*spec);
  if (options.dry_run == DryRun::Client) {  // kubectl's client dry run: the objects, no API call
    if (!format.empty()) {
      std::fputs(format == "json" ? format_objects(as_list(objects), "json").c_str() : to_yaml_stream(objects).c_str(),
                 stdout);
      return kOk;
    }
    for (auto const& o : objects)
      say(o.value("kind", "") + " " + spec->ns + "/" + o["metadata"].value("name", "") + " (client dry run)");
    return kOk;
  }
  auto access = cluster(*a);
  if (!access) return fail(access.error());
  KubeClient client(std::move(*access));
  // With -o, stdout carries the objects only; progress goes to stderr.
  Say progress = format.empty() ? Say(say) : Say([](std::string const& s) { std::fprintf(stderr, "%s\n", s.c_str()); });
  auto res = apply_objects(client, objects, options, progress);
  if (!res) return fail(res.error());
  if (!format.empty()) {
    std::vector<Json> applied;
    for (auto const& r : *res) applied.push_back(r.applied);
    std::fputs(format == "json" ? format_objects(as_list(applied), "json").c_str() : to_yaml_stream(applied).c_str(),
               stdout);
    return kOk;
  }
  if (options.dry_run == DryRun::None)
    say("applied; run `cosmicac-vmi wait -f " + spec_path(*a) + "` to wait for readiness");
  return kOk;
}

// --json: NDJSON; a terminal: one updating line; else a line per change.
WaitOutput output_mode(Args const& a) {
  if (a.flags.count("--json") > 0) return WaitOutput::NdJson;
  return ::isatty(STDOUT_FILENO) ? WaitOutput::Tty : WaitOutput::Lines;
}

// `wait --serial SOCKET`: readiness straight from the agent's virtio-serial
// port (QEMU exposes its host end as a unix socket; KubeVirt does not, so
// there `wait` reads the VMI's Ready condition instead). Prints every event;
// exit 0 on `ready`, 1 on `failed` or when the timeout passes.
int wait_serial(Args const& a) {
  if (!a.positional.empty() || !spec_path(a).empty()) return usage_error("wait --serial takes no NAME or -f SPEC");
  std::chrono::milliseconds timeout = std::chrono::minutes(20);
  if (!opt(a, "--timeout").empty()) {
    auto d = parse_duration(opt(a, "--timeout"));
    if (!d) return usage_error(std::string("--timeout: ") + d.error().message);
    timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  bool const raw = a.flags.count("--json") > 0;
  WaitPrinter printer(output_mode(a), stdout, stderr);
  readiness::SocketFollower follower(opt(a, "--serial"));
  std::optional<readiness::Event> last;
  auto end = follower.run(std::chrono::steady_clock::now() + timeout, [&](readiness::Event const& e) {
    printer.agent(e);
    last = e;
    return e.phase != readiness::Phase::Ready && e.phase != readiness::Phase::Failed;
  });
  if (!end) return fail(from_guest(end.error(), Errc::Transport));
  if (last && last->phase == readiness::Phase::Ready) {
    std::string const summary =
        "ready" + (last->container ? ": container " + readiness::terminal_safe(last->container->name) + " " +
                                         readiness::terminal_safe(last->container->id.substr(0, 12))
                                   : std::string());
    // With --json, stdout carries event lines only (a consumer parses each line).
    printer.final_line(summary, raw);
    return kOk;
  }
  if (last && last->phase == readiness::Phase::Failed) {
    printer.end_progress();
    // The agent's reason is the guest's vocabulary: it stays as the agent said it.
    return fail(host_error(Errc::Failed, "bootstrap failed: reason=" +
                                             std::string(reason_name(last->reason.value_or(Reason::Internal))) +
                                             " message=" + readiness::terminal_quoted(last->message)));
  }
  return fail(host_error(Errc::Timeout, "no readiness within the timeout" +
                                              (follower.last_error().empty()
                                                   ? std::string()
                                                   : " (last: " + readiness::terminal_safe(follower.last_error()) + ")")));
}

int cmd_wait(std::vector<std::string> const& argv) {
  std::string err;
  auto a = parse_args(argv,
                      {"-f", "--filename", "--kubeconfig", "--context", "--timeout", "--interval", "-n", "--namespace",
                       "--serial", "--schedule-timeout", "--profile"},
                      {"--json"}, err);
  if (!a) return usage_error(err);
  if (!opt(*a, "--serial").empty()) return wait_serial(*a);

  std::string ns, name;
  if (!spec_path(*a).empty()) {
    if (!a->positional.empty()) return usage_error("give either NAME or -f SPEC, not both");
    auto spec = load_spec(*a);
    if (!spec) return fail(spec.error());
    if (auto conflict = namespace_conflict(*a, *spec); !conflict.empty()) return fail(host_error(Errc::Usage, conflict));
    ns = spec->ns;
    name = spec->name;
  } else if (a->positional.size() == 1) {
    name = a->positional[0];
    ns = namespace_flag(*a);
  } else {
    return usage_error("wait needs a VMI NAME or -f SPEC");
  }
  FollowOptions w;
  for (auto [key, field] : {std::pair{"--timeout", &w.timeout}, std::pair{"--interval", &w.interval},
                            std::pair{"--schedule-timeout", &w.schedule_timeout}}) {
    if (opt(*a, key).empty()) continue;
    auto d = parse_duration(opt(*a, key));
    if (!d) return usage_error(std::string(key) + ": " + d.error().message);
    *field = *d;
  }
  auto access = cluster(*a);
  if (!access) return fail(access.error());
  if (ns.empty()) ns = access->default_namespace;
  KubeClient client(std::move(*access));
  WaitPrinter printer(output_mode(*a), stdout, stderr);
  auto st = follow_vmi(client, ns, name, w, printer);
  if (!st) {
    printer.end_progress();
    return fail(st.error());  // escaped by follow_vmi
  }
  printer.final_line(st->summary, false);
  return kOk;
}

int cmd_delete(std::vector<std::string> const& argv) {
  std::string err;
  auto a = parse_args(normalize_flags(argv),
                      {"-f", "--filename", "--kubeconfig", "--context", "-n", "--namespace", "--wait", "--timeout",
                       "--dry-run", "--profile"},
                      {"--delete-data"}, err);
  if (!a) return usage_error(err);
  if (spec_path(*a).empty()) return usage_error("-f SPEC is required");
  if (!a->positional.empty()) return usage_error("unexpected argument " + a->positional[0]);
  DeleteOptions options;
  std::string const wait = opt(*a, "--wait");
  if (!wait.empty() && wait != "true" && wait != "false") return usage_error("--wait must be true or false");
  options.wait = wait != "false";
  if (!opt(*a, "--timeout").empty()) {
    auto d = parse_duration(opt(*a, "--timeout"));
    if (!d) return usage_error(std::string("--timeout: ") + d.error().message);
    options.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  std::string const dry = opt(*a, "--dry-run");
  if (!dry.empty() && dry != "none" && dry != "client" && dry != "server")
    return usage_error("--dry-run must be none, client or server");
  options.dry_run_server = dry == "server";
  auto spec = load_spec(*a);
  if (!spec) return fail(spec.error());
  if (auto conflict = namespace_conflict(*a, *spec); !conflict.empty()) return fail(host_error(Errc::Usage, conflict));
  auto plan = plan_delete(*spec, a->flags.count("--delete-data") > 0);
  say(dry == "client" ? "plan (client dry run, nothing is deleted):" : "plan:");
  for (auto const& s : plan) say(std::string("  ") + (s.path.empty() ? "keep   " : "delete ") + s.object + " — " + s.why);
  if (dry == "client") return kOk;
  auto access = cluster(*a);
  if (!access) return fail(access.error());
  KubeClient client(std::move(*access));
  auto st = execute_delete(client, plan, options, say);
  if (!st) return fail(st.error());
  return kOk;
}

// `doctor`: the cluster readiness checklist (host/verbs/doctor.hpp).
int cmd_doctor(std::vector<std::string> const& argv) {
  std::string err;
  auto a = parse_args(argv,
                      {"-f", "--filename", "--kubeconfig", "--context", "-n", "--namespace", "--gpu-type", "--gpus",
                       "--profile"},
                      {"--json"}, err);
  if (!a) return usage_error(err);
  if (!a->positional.empty()) return usage_error("unexpected argument " + a->positional[0]);
  auto profile = operator_profile(*a);
  if (!profile) return fail(profile.error());
  std::optional<JobSpec> spec;
  if (!spec_path(*a).empty()) {
    if (!opt(*a, "--gpu-type").empty() || !opt(*a, "--gpus").empty())
      return usage_error("give either -f SPEC or --gpu-type/--gpus, not both");
    auto loaded = load_renderable_spec(spec_path(*a), *profile);
    if (!loaded) return fail(loaded.error());
    spec = std::move(*loaded);
  }
  std::vector<DeviceRequest> devices;
  if (!opt(*a, "--gpu-type").empty()) {
    // The spec's own rules for gpu.type/gpu.count, on a spec made of them.
    long long count = 1;
    if (std::string const n = opt(*a, "--gpus"); !n.empty()) {
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), count);
      if (ec != std::errc() || p != n.data() + n.size()) return usage_error("--gpus must be a number");
    }
    Json const doc{{"name", "doctor"}, {"namespace", "doctor"}, {"cpu", 1}, {"memory", "1Gi"},
                   {"gpu", Json{{"type", opt(*a, "--gpu-type")}, {"count", count}}}};
    OperatorProfile narrowing = *profile;  // its device lists; its network is for a namespace, not this probe
    narrowing.overlay_network.clear();
    auto probe = parse_renderable_spec(doc.dump(), "--gpu-type/--gpus", narrowing);
    if (!probe) return usage_error(probe.error().message);
    devices.push_back(*probe->gpu);
  } else if (!opt(*a, "--gpus").empty()) {
    return usage_error("--gpus needs --gpu-type");
  }
  auto access = cluster(*a);
  if (!access) return fail(access.error());
  std::string ns = spec ? spec->ns : namespace_flag(*a);
  if (ns.empty()) ns = access->default_namespace;
  KubeClient client(std::move(*access));
  auto checks =
      run_doctor(client, doctor_request(ns, std::move(spec), std::move(devices), COSMICAC_VERSION, *profile));
  if (!checks) return fail(checks.error());
  if (a->flags.count("--json") > 0) say(doctor_json(*checks).dump(2, ' ', false, Json::error_handler_t::replace));
  else std::fputs(doctor_text(*checks).c_str(), stdout);
  return doctor_ok(*checks) ? kOk : kFailure;
}

// `list` and `get NAME`: the VMIs this tool manages, as a table or -o yaml|json.
int cmd_list_or_get(std::vector<std::string> const& argv, bool one) {
  std::string err;
  auto a = parse_args(argv, {"--kubeconfig", "--context", "-n", "--namespace", "-o", "--output"}, {}, err);
  if (!a) return usage_error(err);
  if (one && a->positional.size() != 1) return usage_error("get needs one VMI NAME");
  if (!one && !a->positional.empty()) return usage_error("unexpected argument " + a->positional[0]);
  std::string const format = output_format(*a);
  if (!format.empty() && format != "yaml" && format != "json") return usage_error("-o must be yaml or json");
  auto access = cluster(*a);
  if (!access) return fail(access.error());
  std::string ns = namespace_flag(*a);
  if (ns.empty()) ns = access->default_namespace;
  KubeClient client(std::move(*access));
  auto found = one ? get_vmi(client, ns, a->positional[0]) : list_vmis(client, ns);
  if (!found) return fail(found.error());
  if (!format.empty()) {
    std::fputs(format_objects(*found, format).c_str(), stdout);
    return kOk;
  }
  std::vector<VmiRow> rows;
  auto const now = std::chrono::system_clock::now();
  if (one) rows.push_back(vmi_row(*found, now));
  else
    for (auto const& item : (*found)["items"]) rows.push_back(vmi_row(item, now));
  if (rows.empty()) {
    std::fprintf(stderr, "No VMIs managed by cosmicac-vmi found in %s namespace.\n", ns.c_str());
    return kOk;
  }
  std::fputs(format_vmi_table(rows).c_str(), stdout);
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  // stdout carries documents (-o json|yaml, --json): every log record, such
  // as the one for running an exec credential plugin, goes to stderr.
  cosmicac::log::setup(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("a command is required");
  std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "--version" || cmd == "version") {
    std::printf("cosmicac-vmi %s\n", COSMICAC_VERSION);
    return kOk;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsageText, stdout);
    return kOk;
  }
  for (auto const& r : rest)
    if (r == "--help" || r == "-h") {
      std::fputs(kUsageText, stdout);
      return kOk;
    }
  try {
    if (cmd == "render") return cmd_render(rest, false);
    if (cmd == "render-userdata") return cmd_render(rest, true);
    if (cmd == "apply") return cmd_apply(rest);
    if (cmd == "wait") return cmd_wait(rest);
    if (cmd == "delete") return cmd_delete(rest);
    if (cmd == "doctor") return cmd_doctor(rest);
    if (cmd == "list") return cmd_list_or_get(rest, false);
    if (cmd == "get") return cmd_list_or_get(rest, true);
  } catch (std::exception const& e) {
    return fail(host_error(Errc::Internal, std::string("internal error: ") + e.what()));
  }
  return usage_error("unknown command '" + cmd + "'");
}
