#!/usr/bin/env python3
"""The layout's rules (docs/layout.md), checked on the built objects and the sources.

1. No source file of the product depends on another that depends back on it,
   directly or through others: a file depends on another when its object uses a
   symbol (function or object) the other's object defines, read with nm from the
   objects of the build named on the command line.
2. No folder includes a folder listed after it in docs/layout.md's code map (a
   table whose first column names folders in backquotes by their path from the
   top, such as common/util/; folders of one row are peers and include neither
   each other nor later rows).
3. Every folder of the product holding a .c or .h file is in the map, and every
   folder the map names exists.
4. No block of BLOCK significant lines is repeated between two folders of the
   map's last row (the plugins): blank lines, comments, includes, lone braces and
   the glue of error paths ("if (r < 0)", "goto x;", "return r;") are not counted,
   and neither is a plugin's cni_plugin table.
5. No source of a folder that reads what the Kubernetes API server sends (API_SIDE)
   includes common/util/json-go.h, the reader of members by Go's case-insensitive rule:
   API objects are read by their exact keys (common/util/json-exact.h).

Usage: layers.py SOURCE_ROOT BUILD_DIR
Exit status 0 when all hold, 1 with each circle, upward include, folder and block printed.
"""

import json
import os
import re
import subprocess
import sys

PRODUCT_TOPS = ("common/", "plugins/", "ipam/", "tools/")
CODE_MAP = "docs/layout.md"
BLOCK = 6
GO_RULE_HEADER = "common/util/json-go.h"
API_SIDE = tuple(f"ipam/nv-ipam/{f}" for f in
                 ("api", "carve", "controller", "daemon", "gc", "k8s", "node", "serve", "tool"))


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
    """The folders of the code map, as a rank per folder path."""
    text = open(os.path.join(src, CODE_MAP)).read()
    if "## Code map" not in text:
        sys.exit(f"layers: no code map in {CODE_MAP}")
    section = text.split("## Code map", 1)[1].split("\n## ", 1)[0]
    ranks = {}
    for row in section.splitlines():
        cells = row.split("|")
        if len(cells) < 3 or not cells[1].strip().startswith("`"):
            continue
        rank = len(set(ranks.values()))
        for name in re.findall(r"`([^`]+/)`", cells[1]):
            ranks[name.rstrip("/")] = rank
    if not ranks:
        sys.exit(f"layers: no code map table in {CODE_MAP}")
    return ranks


def source_folders(src):
    """Every folder of the product that holds a .c or .h file."""
    found = set()
    for top in PRODUCT_TOPS:
        for dirpath, _, files in os.walk(os.path.join(src, top)):
            if any(f.endswith((".c", ".h")) for f in files):
                found.add(os.path.relpath(dirpath, src))
    return found


def map_coverage(src, ranks):
    found = []
    folders = source_folders(src)
    for folder in sorted(folders - set(ranks)):
        found.append(f"{folder}/: not in the code map of {CODE_MAP}")
    for folder in sorted(set(ranks) - folders):
        if not folder.startswith(PRODUCT_TOPS):
            found.append(f"{folder}/: the code map names it, but it is no path from the top")
        else:
            found.append(f"{folder}/: the code map names it, but it holds no source")
    return found


GLUE = re.compile(r"^(\{|\}|\};|\} else \{|else|break;|default:|if \(r < 0\)|goto \w+;|"
                  r"return r;|return 0;|return -errno;|int r;)$")


def significant_lines(path):
    """(line number, text) of the lines a repeated block is made of."""
    out, in_comment, in_table = [], False, False
    for n, line in enumerate(open(path, errors="replace"), 1):
        t = " ".join(line.split())
        if in_comment:
            in_comment = "*/" not in t
            continue
        if t.startswith("/*"):
            in_comment = "*/" not in t
            continue
        if re.search(r"struct cni_plugin \w+ = \{", t):
            in_table = True
        if in_table:
            in_table = t != "};"
            continue
        if not t or t.startswith(("#include", "*", "//")) or GLUE.match(t):
            continue
        out.append((n, t))
    return out


def repeated_blocks(src, ranks):
    """Blocks of BLOCK lines found in two folders of the last row."""
    last = max(ranks.values())
    folders = sorted(f for f, r in ranks.items() if r == last)
    seen, found, reported = {}, [], set()
    for folder in folders:
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            rel = f"{folder}/{name}"
            lines = significant_lines(os.path.join(path, name))
            for i in range(len(lines) - BLOCK + 1):
                key = tuple(t for _, t in lines[i:i + BLOCK])
                first = seen.setdefault(key, (folder, rel, lines[i][0]))
                if first[0] != folder and (first[1], rel) not in reported:
                    reported.add((first[1], rel))
                    found.append(f"{rel}:{lines[i][0]}: {BLOCK} lines also in {first[1]}:{first[2]} "
                                 f"(\"{key[0][:50]}\"): a block two plugins share belongs in a room")
    return found


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


def go_rule_includes(src):
    """Includes of the Go-rule JSON header in the folders that read API objects."""
    found = []
    for folder in API_SIDE:
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                for n, line in enumerate(open(path, errors="replace"), 1):
                    if re.match(r'\s*#\s*include\s+"%s"' % re.escape(GO_RULE_HEADER), line):
                        found.append(f"{os.path.relpath(path, src)}:{n}: includes {GO_RULE_HEADER}, "
                                     "but an API object's keys are exact: common/util/json-exact.h")
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
    ranks = code_map(src)
    for line in (upward_includes(src, ranks) + map_coverage(src, ranks) + repeated_blocks(src, ranks)
                 + go_rule_includes(src)):
        failed += 1
        print(line)
    files = len(set(objects.values()))
    arrows = sum(len(e) for e in edges.values())
    print(f"{files} source files, {arrows} file dependencies: "
          + (f"{failed} problems" if failed else
             f"no circle, no upward include, {len(ranks)} folders all in the code map, "
             "no block repeated between plugins, no Go-rule JSON read of API objects"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
