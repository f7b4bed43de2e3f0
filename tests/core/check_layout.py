#!/usr/bin/env python3
"""The layout test: every #include "quiesce/..." follows the dependency direction of DESIGN section 10.

core depends on nothing inside quiesce; sim, cuda, faults and traces on core only; properties on core,
sim, cuda, faults and traces; cli on all of them. An include of quiesce/<module>/... (or quiesce/core.h)
from a file under <root>/<folder>/ is allowed only when <module> is the folder itself or one of its
allowed dependencies. Each violation is printed with the file, the line and the include.

usage: check_layout.py <source root>       exit status 0: direction held, 1: violations, 2: bad usage
"""
import os
import re
import sys

MODULES = ("core", "sim", "cuda", "faults", "traces", "properties", "cli")
ALLOWED = {
    "core": set(),
    "sim": {"core"},
    "cuda": {"core"},
    "faults": {"core"},
    "traces": {"core"},
    "properties": {"core", "sim", "cuda", "faults", "traces"},
    "cli": {"core", "sim", "cuda", "faults", "traces", "properties"},
}
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".inc", ".cc", ".cpp", ".cxx", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]quiesce/([A-Za-z0-9_]+)(/|\.h[">])')
FILES_MAX = 100000  # a bound on the walk: a tree larger than this is an error, not a slow test


def module_of_include(match):
    """quiesce/sim/device.h names sim; quiesce/core.h names core."""
    return match.group(1)


def scan(root):
    """Returns (files scanned, list of violation sentences)."""
    violations = []
    files_scanned = 0
    for folder in MODULES:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            continue
        for directory, subdirectories, names in os.walk(top):
            subdirectories.sort()
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                files_scanned += 1
                if files_scanned > FILES_MAX:
                    raise RuntimeError(f"more than {FILES_MAX} source files under {root}: refusing to go on")
                path = os.path.join(directory, name)
                violations.extend(check_file(root, folder, path))
    return files_scanned, violations


def check_file(root, folder, path):
    found = []
    relative = os.path.relpath(path, root)
    with open(path, encoding="utf-8", errors="replace") as source:
        for line_number, line in enumerate(source, start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = module_of_include(match)
            include = line.strip()
            if target not in MODULES:
                found.append(f"{relative}:{line_number}: {include} names '{target}', which is not a quiesce "
                             f"module ({', '.join(MODULES)})")
            elif target != folder and target not in ALLOWED[folder]:
                allowed = ", ".join(sorted(ALLOWED[folder])) or "nothing inside quiesce"
                found.append(f"{relative}:{line_number}: {include} breaks the dependency direction: "
                             f"{folder} may depend on {allowed}, not on {target}")
    return found


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_layout.py <source root>   (the root must be a folder)", file=sys.stderr)
        return 2
    root = argv[1]
    if not os.path.isdir(os.path.join(root, "core")):
        print(f"{root} has no core/ folder: this is not a quiesce source tree", file=sys.stderr)
        return 2
    files_scanned, violations = scan(root)
    for violation in violations:
        print(violation)
    if violations:
        print(f"layout: {len(violations)} include(s) break DESIGN section 10 in {files_scanned} files")
        return 1
    print(f"layout: {files_scanned} files follow the dependency direction of DESIGN section 10")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
