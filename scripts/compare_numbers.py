#!/usr/bin/python3
"""Compares two outputs of the tools number by number: CSV files, or folders of them (as
`rlsim replay --out` writes). Cells that parse as numbers must read to the same double bit for
bit (the text may differ: "0.10000000000000001" and "0.1" are the same double), except that a -0
before may read 0 after (the writers' rule, src/common/number_text.h; counted apart); other
cells must be equal as text. Prints what it compared and exits 1 at the first file that differs.

    scripts/compare_numbers.py before.csv after.csv
    scripts/compare_numbers.py before_dir after_dir     # every *.csv of both, by name
"""
import csv
import os
import struct
import sys


ZERO = struct.pack("<d", 0.0)
NEGATIVE_ZERO = struct.pack("<d", -0.0)


def bits(text):
    """The double's 64 bits, or None when the cell is not a number."""
    try:
        return struct.pack("<d", float(text))
    except ValueError:
        return None


def compare_file(a, b, counts):
    with open(a, newline="") as fa, open(b, newline="") as fb:
        rows_a, rows_b = list(csv.reader(fa)), list(csv.reader(fb))
    if len(rows_a) != len(rows_b):
        return f"{b}: {len(rows_b)} rows, {a} has {len(rows_a)}"
    for r, (ra, rb) in enumerate(zip(rows_a, rows_b), start=1):
        if len(ra) != len(rb):
            return f"{b}: row {r}: {len(rb)} cells, {a} has {len(ra)}"
        for c, (x, y) in enumerate(zip(ra, rb), start=1):
            bx, by = bits(x), bits(y)
            if bx is None or by is None:
                if x != y:
                    return f"{b}: row {r}, column {c}: '{y}', {a} has '{x}'"
                continue
            counts["numbers"] += 1
            if bx != by and bx == NEGATIVE_ZERO and by == ZERO:
                counts["-0 written 0"] += 1
                continue
            if bx != by:
                return f"{b}: row {r}, column {c}: {y} is not the double {x}"
            if x != y:
                counts["text differs"] += 1
    counts["files"] += 1
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = sys.argv[1:]
    if os.path.isdir(a):
        names_a = sorted(n for n in os.listdir(a) if n.endswith(".csv"))
        names_b = sorted(n for n in os.listdir(b) if n.endswith(".csv"))
        if names_a != names_b:
            sys.exit(f"the folders hold different CSV files: {set(names_a) ^ set(names_b)}")
        pairs = [(os.path.join(a, n), os.path.join(b, n)) for n in names_a]
    else:
        pairs = [(a, b)]
    counts = {"files": 0, "numbers": 0, "text differs": 0, "-0 written 0": 0}
    for x, y in pairs:
        problem = compare_file(x, y, counts)
        if problem:
            print(problem)
            sys.exit(1)
    print(f"same doubles: {counts['files']} files, {counts['numbers']} numbers bit for bit "
          f"({counts['text differs']} written with other text; {counts['-0 written 0']} -0 now 0)")


if __name__ == "__main__":
    main()
