#!/usr/bin/env python3
"""Rewrites docs/cli.md's `alsim run` flag rows for the solver options from `alsim run --help`.

The option table (engine/solver/solver_option_table.cc) is the source; solver_option_table_tests
fails when the rows drift from it. Usage: scripts/solver-flags-table.py [build/bin/alsim]
"""
import re
import subprocess
import sys

alsim = sys.argv[1] if len(sys.argv) > 1 else "build/bin/alsim"
help_text = subprocess.run([alsim, "run", "--help"], check=True, capture_output=True,
                           text=True).stdout
entries, current = [], None
for line in help_text.split("\n"):
    match = re.match(r"    (--\S+)(?: (\S+))?\s*(.*)$", line)
    if match and line.startswith("    --"):
        current = [match.group(1), match.group(2) or "", match.group(3)]
        entries.append(current)
    elif current and line.startswith(" " * 25):
        current[2] += " " + line.strip()
rows = []
for flag, metavar, text in entries:
    match = re.search(r"^(.*) \[default (.*)\] \((\w+)\)$", text.strip())
    if match:
        doc, default, name = match.groups()
        rows.append("| `%s %s` | %s (`%s`) | %s |" % (flag, metavar, doc, name, default))
with open("docs/cli.md") as f:
    readme = f.read()
begin, end = readme.index("| `--solver NAME` |"), readme.index("| `--json` |")
with open("docs/cli.md", "w") as f:
    f.write(readme[:begin] + "\n".join(rows) + "\n" + readme[end:])
print("docs/cli.md: %d solver option rows" % len(rows))
