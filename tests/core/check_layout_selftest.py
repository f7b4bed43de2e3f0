#!/usr/bin/env python3
"""Self-test of check_layout.py: a planted violation on a temporary tree must fail, naming the offending
file and include; the same tree without it must pass. Proves the layout test can fail."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("check_layout", os.path.join(HERE, "check_layout.py"))
check_layout = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(check_layout)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def clean_tree(root):
    write(root, "core/include/quiesce/core/backend.h", '#include "quiesce/core/types.h"\n#include <vector>\n')
    write(root, "core/src/strings.cc", '#include "quiesce/core.h"\n')
    write(root, "sim/src/device.cc", '#include "quiesce/sim/device.h"\n#include "quiesce/core/backend.h"\n')
    write(root, "faults/include/quiesce/faults/injector.h", '#include <quiesce/core/backend.h>\n')
    write(root, "properties/src/campaign.cc",
          '#include "quiesce/sim/device.h"\n#include "quiesce/faults/injector.h"\n#include "quiesce/traces/x.h"\n')
    write(root, "cli/src/main.cc", '#include "quiesce/properties/campaign.h"\n#include "quiesce/cuda/device.h"\n')
    # Commented-out includes and includes outside module folders are not checked.
    write(root, "core/src/notes.cc", '// #include "quiesce/sim/device.h"\n')
    write(root, "tests/core/anything_test.cc", '#include "quiesce/cli/main.h"\n')


def run(root):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        status = check_layout.main(["check_layout.py", root])
    return status, output.getvalue()


class LayoutCheckerSelfTest(unittest.TestCase):
    def test_clean_tree_passes(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            status, output = run(root)
            self.assertEqual(status, 0, output)
            self.assertIn("7 files follow", output)

    def test_core_including_sim_fails_and_names_the_file(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            write(root, "core/include/quiesce/core/engine/engine.h",
                  '#pragma once\n#include "quiesce/sim/device.h"\n')
            status, output = run(root)
            self.assertEqual(status, 1, output)
            self.assertIn(os.path.join("core", "include", "quiesce", "core", "engine", "engine.h") + ":2", output)
            self.assertIn('#include "quiesce/sim/device.h"', output)
            self.assertIn("core may depend on nothing inside quiesce, not on sim", output)

    def test_sim_including_faults_fails(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            write(root, "sim/src/oracle.cc", '#include <quiesce/faults/plan.h>\n')
            status, output = run(root)
            self.assertEqual(status, 1, output)
            self.assertIn(os.path.join("sim", "src", "oracle.cc") + ":1", output)
            self.assertIn("sim may depend on core, not on faults", output)

    def test_properties_including_cli_fails(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            write(root, "properties/include/quiesce/properties/x.h", '  #  include "quiesce/cli/options.h"\n')
            status, output = run(root)
            self.assertEqual(status, 1, output)
            self.assertIn("not on cli", output)

    def test_unknown_module_fails(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            write(root, "traces/src/x.cc", '#include "quiesce/engine/engine.h"\n')
            status, output = run(root)
            self.assertEqual(status, 1, output)
            self.assertIn("'engine', which is not a quiesce module", output)

    def test_every_violation_is_reported_not_just_the_first(self):
        with tempfile.TemporaryDirectory() as root:
            clean_tree(root)
            write(root, "cuda/src/a.cc", '#include "quiesce/sim/device.h"\n#include "quiesce/traces/t.h"\n')
            status, output = run(root)
            self.assertEqual(status, 1, output)
            self.assertIn("2 include(s) break", output)

    def test_a_tree_without_core_is_bad_usage(self):
        with tempfile.TemporaryDirectory() as root:
            status, _ = run(root)
            self.assertEqual(status, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
