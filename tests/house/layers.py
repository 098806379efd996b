#!/usr/bin/env python3
"""The layout's two rules, checked on the built objects and the sources.

1. No source file of the product depends on another that depends back on it,
   directly or through others: a file depends on another when its object uses a
   symbol (function or object) the other's object defines, read with nm from the
   objects of the build named on the command line.
2. No folder includes a folder listed after it in docs/nv-ipam.md's code map (a
   table whose first column names folders in backquotes: ipam/nv-ipam/ folders by
   their name there, others by their path from the top, such as common/util/;
   folders of one row are peers and include neither each other nor later rows).

Usage: layers.py SOURCE_ROOT BUILD_DIR
Exit status 0 when both hold, 1 with each circle and each upward include printed.
"""

import json
import os
import re
import subprocess
import sys

NVIPAM = "ipam/nv-ipam/"
PRODUCT_TOPS = ("common/", "plugins/", "ipam/", "tools/")


def product_objects(src, build):
    """Map each object of the product (no tests, benchmarks or fuzzers) to its source."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    objects = {}
    for c in commands:
        source = os.path.relpath(os.path.join(c["directory"], c["file"]), src)
        if not source.startswith(PRODUCT_TOPS) or not source.endswith(".c"):
            continue
        obj = os.path.join(c["directory"], c["output"])
        if not os.path.exists(obj):
            sys.exit(f"layers: {obj} is not built (build {build} first)")
        objects[obj] = source
    return objects


def symbol_tables(objects):
    """Per source file: the global symbols it defines and those it uses."""
    defines, uses = {}, {}
    names = sorted(objects)
    for i in range(0, len(names), 200):
        chunk = names[i:i + 200]
        out = subprocess.run(["nm", "-A", "--no-sort"] + chunk, check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"^(.*?):\s*(?:[0-9a-f]+)?\s+([A-Za-z])\s+(\S+)$", line)
            if not m:
                continue
            obj, kind, sym = m.groups()
            source = objects[obj]
            if kind == "U":
                uses.setdefault(source, set()).add(sym)
            elif kind in "TDBRCGSV":
                defines.setdefault(source, set()).add(sym)
    return defines, uses


def dependency_graph(defines, uses):
    owner = {}
    for source, syms in defines.items():
        for sym in syms:
            owner.setdefault(sym, set()).add(source)
    edges = {}
    for source, syms in uses.items():
        for sym in syms:
            for other in owner.get(sym, ()):
                if other != source:
                    edges.setdefault(source, {}).setdefault(other, set()).add(sym)
    return edges


def circles(edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    nodes = set(edges) | {d for e in edges.values() for d in e}
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def code_map(src):
    """The folders of docs/nv-ipam.md's code map, as a rank per folder path."""
    text = open(os.path.join(src, "docs/nv-ipam.md")).read()
    section = text.split("## Code map", 1)[1].split("\n## ", 1)[0]
    ranks = {}
    for row in section.splitlines():
        cells = row.split("|")
        if len(cells) < 3 or not cells[1].strip().startswith("`"):
            continue
        rank = len(set(ranks.values()))
        for name in re.findall(r"`([^`]+/)`", cells[1]):
            path = name if name.startswith(PRODUCT_TOPS) else NVIPAM + name
            ranks[path.rstrip("/")] = rank
    if not ranks:
        sys.exit("layers: no code map table in docs/nv-ipam.md")
    return ranks


def upward_includes(src, ranks):
    found = []
    for top in PRODUCT_TOPS:
        for dirpath, _, files in os.walk(os.path.join(src, top)):
            folder = os.path.relpath(dirpath, src)
            if folder not in ranks:
                continue
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                for n, line in enumerate(open(path, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)/[^/"]+"', line)
                    if not m or m.group(1) == folder or m.group(1) not in ranks:
                        continue
                    if ranks[m.group(1)] >= ranks[folder]:
                        found.append(f"{folder}/{name}:{n}: includes {m.group(1)}/, "
                                     "which the code map lists at its level or after it")
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, build = sys.argv[1], sys.argv[2]
    objects = product_objects(src, build)
    edges = dependency_graph(*symbol_tables(objects))
    failed = 0
    for component in circles(edges):
        failed += 1
        print(f"circle of {len(component)} files:")
        for a in component:
            for b in component:
                if b in edges.get(a, {}):
                    print(f"  {a} -> {b}: {', '.join(sorted(edges[a][b])[:6])}")
    for line in upward_includes(src, code_map(src)):
        failed += 1
        print(line)
    files = len(set(objects.values()))
    arrows = sum(len(e) for e in edges.values())
    print(f"{files} source files, {arrows} file dependencies: "
          + (f"{failed} problems" if failed else "no circle, no upward include"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
