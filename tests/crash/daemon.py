#!/usr/bin/env python3
"""The reference nv-ipam node daemon's writes of its store file, as it makes them.

  daemon.py new FILE POOL:IP:CONTAINER:IFNAME...   a store holding these entries
  daemon.py edit FILE FROM add POOL IP CONTAINER IFNAME [del CONTAINER IFNAME]
                                                   FROM's entries with one more (and one
                                                   fewer), as FILE

The daemon writes with renameio: a temporary file beside it, synced, renamed over the
file (the directory is not synced). The document and its checksum are refstore.py's.
"""

import json
import os
import sys

# Nothing written beside the sources (the modules imported are the tree's).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ipam"))
import refstore  # noqa: E402


def entry(cid, ifname, ip):
    return {"container_id": cid, "interface_name": ifname, "ip_address": ip,
            "metadata": {"create_time": "2026-11-26T00:00:00Z", "pod_uuid": "", "pod_name": cid,
                         "pod_namespace": "ns", "device_id": "", "pool_config_snapshot": ""}}


def write(path, root):
    root["checksum"] = 0
    root["checksum"] = refstore.checksum(root)
    tmp = path + ".tmp-daemon"
    with open(tmp, "w") as f:
        json.dump(root, f, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "new":
        root = {"version": 1, "pools": {}}
        for spec in sys.argv[3:]:
            pool, ip, cid, ifname = spec.split(":")
            p = root["pools"].setdefault(pool, {"name": pool, "entries": {}, "last_pool_config": "",
                                                "last_reserved_ip": ""})
            p["entries"]["%s_%s" % (cid, ifname)] = entry(cid, ifname, ip)
            p["last_reserved_ip"] = ip
        write(sys.argv[2], root)
        return 0
    if len(sys.argv) in (9, 12) and sys.argv[1] == "edit" and sys.argv[4] == "add":
        refstore.read(sys.argv[3])
        with open(sys.argv[3], "rb") as f:
            root = json.loads(f.read().decode("utf-8"))
        pool, ip, cid, ifname = sys.argv[5:9]
        p = root.setdefault("pools", {}).setdefault(pool, {"name": pool, "entries": {},
                                                           "last_pool_config": "", "last_reserved_ip": ""})
        p.setdefault("entries", {})["%s_%s" % (cid, ifname)] = entry(cid, ifname, ip)
        p["last_reserved_ip"] = ip
        if len(sys.argv) == 12 and sys.argv[9] == "del":
            for q in root["pools"].values():
                (q.get("entries") or {}).pop("%s_%s" % (sys.argv[10], sys.argv[11]), None)
        write(sys.argv[2], root)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
