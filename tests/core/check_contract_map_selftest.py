#!/usr/bin/env python3
"""Self-test of tools/check_contract_map.py: the real map passes; a copy with a planted error (a missing
row, a symbol absent from its file, a test that does not exist, an extra method, a reason-less exclusion)
fails and names the problem. Proves the contract-map check can fail.

usage: check_contract_map_selftest.py <repository root> <seed folder>"""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
SEEDS = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
SPEC = importlib.util.spec_from_file_location(
    "check_contract_map", os.path.join(ROOT or ".", "tools", "check_contract_map.py"))
checker = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(checker)


def run_on(map_text):
    """Runs the checker on a temporary root whose map is map_text and whose other folders are the real ones."""
    with tempfile.TemporaryDirectory() as root:
        for folder in ("core", "tests", "sim", "faults", "traces", "cuda", "properties", "cli"):
            if os.path.isdir(os.path.join(ROOT, folder)):
                os.symlink(os.path.join(ROOT, folder), os.path.join(root, folder))
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "contract-map.md"), "w", encoding="utf-8") as out:
            out.write(map_text)
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            status = checker.main(["check_contract_map.py", root, SEEDS])
        return status, output.getvalue()


class ContractMapCheckerSelfTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs", "contract-map.md"), encoding="utf-8") as source:
            cls.real = source.read()

    def test_the_real_map_passes(self):
        status, output = run_on(self.real)
        self.assertEqual(status, 0, output)
        self.assertIn("63 seed methods (62 distinct names)", output)

    def test_a_missing_row_fails(self):
        lines = [line for line in self.real.splitlines() if not line.startswith("| `poll_event` |")]
        status, output = run_on("\n".join(lines))
        self.assertEqual(status, 1, output)
        self.assertIn("Accelerator.poll_event has 0 rows", output)

    def test_a_symbol_absent_from_its_file_fails(self):
        status, output = run_on(self.real.replace("quiesce::Backend::poll_event", "quiesce::Backend::peek_event"))
        self.assertEqual(status, 1, output)
        self.assertIn("'peek_event' (from quiesce::Backend::peek_event) does not appear", output)

    def test_a_test_that_does_not_exist_fails(self):
        status, output = run_on(self.real.replace("ConformanceSubmit.SynchronizeDrainsTheQueue",
                                                  "ConformanceSubmit.SynchronizeDoesNothing"))
        self.assertEqual(status, 1, output)
        self.assertIn("test 'ConformanceSubmit.SynchronizeDoesNothing' does not appear", output)

    def test_a_method_the_seed_lacks_fails(self):
        extra = "| `teleport` | `quiesce::Backend::submit` | `core/include/quiesce/core/backend.h` | pending: x |"
        text = self.real.replace("| `cancel_event` |", extra + "\n| `cancel_event` |")
        status, output = run_on(text)
        self.assertEqual(status, 1, output)
        self.assertIn("Accelerator has no method 'teleport'", output)

    def test_an_exclusion_without_a_reason_fails(self):
        lines = []
        for line in self.real.splitlines():
            if line.startswith("| `logger` |"):
                line = "| `logger` | not modelled: | — | — |"
            lines.append(line)
        status, output = run_on("\n".join(lines))
        self.assertEqual(status, 1, output)
        self.assertIn("'logger' is not modelled but gives no reason", output)


if __name__ == "__main__":
    if ROOT is None or SEEDS is None:
        print("usage: check_contract_map_selftest.py <repository root> <seed folder>", file=sys.stderr)
        sys.exit(2)
    if not os.path.isdir(SEEDS):
        print(f"skipping: the seed folder {SEEDS} is absent")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
