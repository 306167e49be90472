#!/usr/bin/python3
"""The layering check: every module's CMake target links
exactly what its #includes use, and a module includes only the modules its
layer allows. The include root is the whole tree, so without this nothing
stops disk/ from including registry/.

For each module folder: the first-party modules its .cpp/.hpp files include
("x/...") must equal the cosmicac_x targets its CMakeLists links (library DEPS
plus the executable's target_link_libraries), and the third-party headers it
includes must equal the dep_* targets it links. Every included module must be
in ALLOWED for it (README, "Folders": agent/ orchestrates, only agent/ and
host/ read config/, the others do not know each other except through engine/).

Within a module of NO_CYCLES, no two files include each other, directly or
round a longer loop (a file and its header count as one: host/cli/dispatch.cpp
including completion.hpp while completion.cpp includes dispatch.hpp is a loop).
host/cli/ is one: each command is a file of its own that includes only the
shared headers, and the table, the help and the completion read them one way.

  tests/lint/layers.py [--root DIR]    exit 0 clean, 1 with one line per finding
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# Which modules each module may include. common/ is everyone's.
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "config": {"common"},
    "readiness": {"common"},
    "engine": {"common"},
    "disk": {"common"},
    "registry": {"common", "engine"},
    "container": {"common", "engine"},
    "gpu": {"common"},
    "agent": {"common", "config", "readiness", "engine", "disk", "registry", "container", "gpu"},
    # The host tool, one library per concern: rendering (spec, render) never
    # reaches the cluster, cluster access knows no job spec, and only the
    # verbs bring the two together. Only the commands that read the guest's
    # events (wait) need readiness/; the small helpers they all use (the
    # terminal escaper, the UTF-8 decoder) are common/'s.
    "host/base": {"common"},
    "host/spec": {"common", "config", "host/base"},
    "host/render": {"common", "config", "host/base", "host/spec"},
    "host/cluster": {"common", "host/base"},
    "host/verbs": {"common", "readiness", "host/base", "host/spec", "host/render", "host/cluster"},
    "host/cli": {"common", "readiness", "host/base", "host/spec", "host/render", "host/cluster", "host/verbs"},
}

# Modules whose files include one another one way only (see above).
NO_CYCLES: set[str] = {"host/cli"}

# Known exceptions: (module, included module) allowed for now, without a link.
# A stale entry (the include is gone) is itself a finding: delete the line.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}

# First-party targets other than cosmicac_<folder>: the header that needs each.
# (common/libmount_ptr.hpp is header-only and brings libmount, which only
# disk/ and registry/ use, so it is a target of its own, not part of common.)
EXTRA_TARGETS: dict[str, str] = {
    "cosmicac_libmount": "common/libmount_ptr.hpp",
}

# Third-party include prefix -> the interface target that provides it (cmake/CosmicacDeps.cmake).
THIRD_PARTY: dict[str, str] = {
    "boost": "dep_boost",
    "spdlog": "dep_spdlog",
    "fmt": "dep_spdlog",  # fmt comes with spdlog (dep_spdlog links both)
    "systemd": "dep_systemd",
    "nlohmann": "dep_json",
    "curl": "dep_curl",
    "blkid": "dep_blkid",
    "libmount": "dep_mount",
    "libfdisk": "dep_fdisk",
    "yaml-cpp": "yaml-cpp",
    "openssl": "dep_crypto",
    "CLI": "CLI11::CLI11",  # header-only; Debian's libcli11-dev ships its CMake package
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
LIBRARY = re.compile(r"cosmicac_library\(\s*(\w+)(.*?)\)", re.S)
LINK = re.compile(r"target_link_libraries\(\s*([\w-]+)(.*?)\)", re.S)
NOT_LINKED = {"PUBLIC", "PRIVATE", "INTERFACE", "cosmicac_flags"}


def strip_comments(cmake: str) -> str:
    return re.sub(r"#[^\n]*", "", cmake)


def module_links(cmake: str, module: str) -> set[str]:
    """cosmicac_library's DEPS plus every target_link_libraries item, minus the module's own target."""
    text = strip_comments(cmake)
    links: set[str] = set()
    for _, args in LIBRARY.findall(text):
        words = args.split()
        if "DEPS" in words:
            links.update(w for w in words[words.index("DEPS") + 1:] if w not in ("SOURCES",))
    for _, args in LINK.findall(text):
        links.update(args.split())
    return links - NOT_LINKED - {target_of(module)}


def target_of(module: str) -> str:
    """host/render -> cosmicac_host_render."""
    return "cosmicac_" + module.replace("/", "_")


def module_of(include: str) -> str:
    """The module an include path belongs to: "host/render/x.hpp" -> "host/render", "disk/x.hpp" -> "disk"."""
    parts = include.split("/")
    if len(parts) > 2 and "/".join(parts[:2]) in ALLOWED:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else ""


def module_includes(folder: Path, module: str) -> tuple[dict[str, list[str]], dict[str, list[str]], set[str]]:
    """(first-party top folder -> files including it, third-party prefix -> files, first-party headers), own folder left out."""
    ours: dict[str, list[str]] = {}
    theirs: dict[str, list[str]] = {}
    headers: set[str] = set()
    # A module's subfolders (host/verbs/wait/) are part of it, unless one is a module of its own.
    for f in sorted(folder.rglob("*")):
        if f.suffix not in (".cpp", ".hpp") or not f.is_file():
            continue
        where = f"{module}/{f.relative_to(folder).as_posix()}"
        if any(where.startswith(inner + "/") for inner in ALLOWED if inner.startswith(module + "/")):
            continue
        for kind, path in INCLUDE.findall(f.read_text(errors="replace")):
            top = module_of(path)
            if kind == '"':
                if top and top != module:
                    ours.setdefault(top, []).append(where)
                    headers.add(path)
            elif top in THIRD_PARTY:
                theirs.setdefault(top, []).append(where)
    return ours, theirs, headers


def include_loops(folder: Path, module: str) -> list[list[str]]:
    """The loops of includes between the files of one module, each as the
    files (a .cpp and its .hpp as one, without the suffix) in a loop, sorted."""
    graph: dict[str, set[str]] = {}
    for f in sorted(folder.rglob("*")):
        if f.suffix not in (".cpp", ".hpp") or not f.is_file():
            continue
        unit = f"{module}/{f.relative_to(folder).with_suffix('').as_posix()}"
        for kind, path in INCLUDE.findall(f.read_text(errors="replace")):
            other = path.rsplit(".", 1)[0]
            if kind == '"' and other.startswith(module + "/") and other != unit:
                graph.setdefault(unit, set()).add(other)
    # Tarjan's strongly connected components: every one of more than one file is a loop.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(loops)


def check(root: Path) -> list[str]:
    findings: list[str] = []
    used_exceptions: set[tuple[str, str]] = set()
    for module in sorted(ALLOWED):
        folder = root / module
        cmake_file = folder / "CMakeLists.txt"
        if not cmake_file.is_file():
            findings.append(f"{module}/: no CMakeLists.txt")
            continue
        links = module_links(cmake_file.read_text(), module)
        ours, theirs, headers = module_includes(folder, module)

        for dep, files in sorted(ours.items()):
            if dep not in ALLOWED:
                findings.append(f"{module}/ includes {dep}/ ({files[0]}), which is not a product module")
                continue
            if (module, dep) in KNOWN_EXCEPTIONS:
                used_exceptions.add((module, dep))
                continue
            if dep not in ALLOWED[module]:
                findings.append(f"{module}/ must not depend on {dep}/ ({files[0]} includes it; "
                                f"{module}/ may use: {', '.join(sorted(ALLOWED[module])) or 'nothing'})")
            if target_of(dep) not in links:
                findings.append(f"{module}/CMakeLists.txt does not link {target_of(dep)}, but {files[0]} includes {dep}/")
        for target, header in sorted(EXTRA_TARGETS.items()):
            if header in headers and target not in links:
                findings.append(f"{module}/CMakeLists.txt does not link {target}, but a file of {module}/ includes {header}")
            if target in links and header not in headers:
                findings.append(f"{module}/CMakeLists.txt links {target}, but no file of {module}/ includes {header}")
        module_of_target = {target_of(m): m for m in ALLOWED}
        for target in sorted(t for t in links if t.startswith("cosmicac_") and t not in EXTRA_TARGETS):
            if target not in {target_of(m) for m in ours}:
                named = module_of_target.get(target, target.removeprefix("cosmicac_"))
                findings.append(f"{module}/CMakeLists.txt links {target}, but no file of {module}/ includes {named}/")

        wanted = {THIRD_PARTY[p] for p in theirs}
        third_links = {t for t in links if not t.startswith("cosmicac_")}
        for target in sorted(wanted - third_links):
            files = [f for p, fs in theirs.items() if THIRD_PARTY[p] == target for f in fs]
            findings.append(f"{module}/CMakeLists.txt does not link {target}, but {files[0]} includes its headers")
        for target in sorted(third_links - wanted):
            findings.append(f"{module}/CMakeLists.txt links {target}, but no file of {module}/ includes its headers")

    for module in sorted(NO_CYCLES):
        for loop in include_loops(root / module, module):
            findings.append(f"{module}/: {', '.join(loop)} include each other (a file of {module}/ includes "
                            f"another one way only)")

    for module, dep in sorted(set(KNOWN_EXCEPTIONS) - used_exceptions):
        findings.append(f"known exception {module}/ -> {dep}/ is no longer needed: delete its line "
                        f"in KNOWN_EXCEPTIONS (tests/lint/layers.py)")
    return findings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    a = ap.parse_args()
    findings = check(a.root)
    for f in findings:
        print(f"layers: {f}")
    if not findings:
        print(f"layers: {len(ALLOWED)} modules link exactly what they include, within their layers")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
