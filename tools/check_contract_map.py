#!/usr/bin/env python3
"""Checks docs/contract-map.md against the seed traits and the source tree.

The map has one markdown table per seed trait, under a heading "## <Trait> ...", with the columns
`seed method | quiesce symbol | file | test`. This script checks that:
  - every method of every seed trait (extracted from the trait declaration in the seed file) has exactly
    one row in its trait's table, and no row names a method the seed does not have;
  - the totals are the known 63 rows and 62 distinct method names (a seed change must update the map);
  - every named file exists, and the last component of every symbol (Backend::submit -> submit) appears
    in that file as a word;
  - every test reference `path:TestName` names an existing file that contains TestName; a test cell may
    instead say "pending: why" (engine tests not yet written), which is allowed and listed;
  - a row whose symbol cell says "not modelled: reason" gives a reason and names no file or test.

usage: check_contract_map.py <repository root> <seed folder>
exit status: 0 the map holds, 1 it does not (each problem printed), 2 bad usage, 77 seeds absent (the
table checks still ran and passed; only the comparison with the seeds was skipped).
"""
import os
import re
import sys

EXPECTED_ROWS = 63
EXPECTED_DISTINCT_NAMES = 62
SKIP_STATUS = 77
NOT_MODELLED = "not modelled:"
PENDING = "pending:"
ROWS_MAX = 1000  # a bound on the table walk

HEADING = re.compile(r"^##\s+([A-Za-z_][A-Za-z0-9_]*)\b")
FN = re.compile(r"\bfn\s+([a-z_][a-z0-9_]*)\s*[<(]")
TEST_REFERENCE = re.compile(r"^`?([^`:\s]+):([A-Za-z_][A-Za-z0-9_.]*)`?$")


def seed_traits(seed_folder):
    """{trait name: [method names in declaration order]} from every *.txt seed in the folder."""
    traits = {}
    for name in sorted(os.listdir(seed_folder)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(seed_folder, name), encoding="utf-8") as seed:
            lines = seed.read().splitlines()
        trait = None
        methods = []
        in_declaration = False
        for line in lines:
            if trait is None and line.startswith("Trait "):
                trait = line.split()[1]
            if line.startswith("pub trait "):
                in_declaration = True
            elif in_declaration and line.strip() == "}":
                break
            elif in_declaration:
                methods.extend(FN.findall(line))
        if trait is None or not methods:
            raise ValueError(f"seed {name} has no 'Trait' line or no trait declaration with methods")
        traits[trait] = methods
    return traits


def cell_text(cell):
    return cell.strip().strip("`").strip()


def parse_map(map_path):
    """{heading trait: [(line number, [cells])]} for every table row under a '## Trait' heading."""
    tables = {}
    current = None
    with open(map_path, encoding="utf-8") as source:
        for line_number, line in enumerate(source, start=1):
            heading = HEADING.match(line)
            if heading:
                current = heading.group(1)
                continue
            if current is None or not line.lstrip().startswith("|"):
                continue
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if cells[0].lower() == "seed method" or set(cells[0]) <= set("-: "):
                continue  # the header row and the separator row
            rows = tables.setdefault(current, [])
            if len(rows) >= ROWS_MAX:
                raise ValueError(f"table {current} has more than {ROWS_MAX} rows")
            rows.append((line_number, cells))
    return tables


def file_contains_word(path, word):
    with open(path, encoding="utf-8", errors="replace") as source:
        return re.search(r"\b" + re.escape(word) + r"\b", source.read()) is not None


def check_row(root, where, cells, pending):
    problems = []
    if len(cells) != 4:
        return [f"{where}: expected 4 cells (seed method | quiesce symbol | file | test), found {len(cells)}"]
    method, symbol, file_cell, test_cell = cells
    if symbol.lower().startswith(NOT_MODELLED):
        if len(symbol) - len(NOT_MODELLED) < 10:
            problems.append(f"{where}: '{cell_text(method)}' is not modelled but gives no reason")
        if cell_text(file_cell) not in ("—", "-") or cell_text(test_cell) not in ("—", "-"):
            problems.append(f"{where}: a row that is not modelled names no file or test (use —)")
        return problems
    symbol_name = cell_text(symbol.split("(")[0])
    relative = cell_text(file_cell)
    path = os.path.join(root, relative)
    if not symbol_name.startswith("quiesce::"):
        problems.append(f"{where}: symbol '{symbol_name}' is not a quiesce symbol (quiesce::...)")
    if not os.path.isfile(path):
        problems.append(f"{where}: file '{relative}' does not exist")
    else:
        last = symbol_name.split("::")[-1]
        if not file_contains_word(path, last):
            problems.append(f"{where}: '{last}' (from {symbol_name}) does not appear in {relative}")
    test_text = test_cell.strip()
    if test_text.lower().startswith(PENDING):
        pending.append(f"{where}: {cell_text(method)} -> {symbol_name}: {test_text}")
        return problems
    references = [reference.strip() for reference in test_text.split(",") if reference.strip()]
    if not references:
        problems.append(f"{where}: no test named for '{cell_text(method)}'")
    for reference in references:
        match = TEST_REFERENCE.match(reference)
        if not match:
            problems.append(f"{where}: test reference '{reference}' is not of the form `path:TestName`")
            continue
        test_path, test_name = match.groups()
        full = os.path.join(root, test_path)
        if not os.path.isfile(full):
            problems.append(f"{where}: test file '{test_path}' does not exist")
        elif not file_contains_word(full, test_name.split(".")[-1]):
            problems.append(f"{where}: test '{test_name}' does not appear in {test_path}")
    return problems


def compare_with_seeds(tables, traits):
    problems = []
    for trait, methods in traits.items():
        rows = tables.get(trait)
        if rows is None:
            problems.append(f"the map has no table for seed trait {trait} (a '## {trait}' heading)")
            continue
        mapped = [cell_text(cells[0]) for _, cells in rows]
        for method in methods:
            count = mapped.count(method)
            if count != 1:
                problems.append(f"{trait}.{method} has {count} rows in the map; it needs exactly one")
        for line_number, cells in rows:
            if cell_text(cells[0]) not in methods:
                problems.append(f"line {line_number}: {trait} has no method '{cell_text(cells[0])}'")
    for trait in tables:
        if trait not in traits:
            problems.append(f"the map has a table for '{trait}', which is not a seed trait")
    row_count = sum(len(methods) for methods in traits.values())
    distinct = len({method for methods in traits.values() for method in methods})
    if row_count != EXPECTED_ROWS or distinct != EXPECTED_DISTINCT_NAMES:
        problems.append(f"the seeds declare {row_count} methods ({distinct} distinct names), not the "
                        f"{EXPECTED_ROWS} ({EXPECTED_DISTINCT_NAMES}) this map was written for: update the map")
    return problems, row_count, distinct


def main(argv):
    if len(argv) != 3:
        print("usage: check_contract_map.py <repository root> <seed folder>", file=sys.stderr)
        return 2
    root, seed_folder = argv[1], argv[2]
    map_path = os.path.join(root, "docs", "contract-map.md")
    if not os.path.isfile(map_path):
        print(f"there is no contract map at {map_path}", file=sys.stderr)
        return 2
    tables = parse_map(map_path)
    problems = []
    pending = []
    for trait, rows in tables.items():
        for line_number, cells in rows:
            problems.extend(check_row(root, f"contract-map.md:{line_number} ({trait})", cells, pending))
    seeds_present = os.path.isdir(seed_folder)
    if seeds_present:
        seed_problems, row_count, distinct = compare_with_seeds(tables, seed_traits(seed_folder))
        problems.extend(seed_problems)
    for problem in problems:
        print(problem)
    for note in pending:
        print(f"note: test pending at {note}")
    if problems:
        print(f"contract map: {len(problems)} problem(s)")
        return 1
    mapped_rows = sum(len(rows) for rows in tables.values())
    if not seeds_present:
        print(f"contract map: {mapped_rows} rows hold against the tree; skipped the seed comparison because "
              f"the seed folder {seed_folder} is absent")
        return SKIP_STATUS
    print(f"contract map: {row_count} seed methods ({distinct} distinct names) each map to a symbol that "
          f"exists, {len(pending)} with a test still pending")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
