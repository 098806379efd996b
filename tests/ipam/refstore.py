#!/usr/bin/env python3
"""Reads a store in the reference nv-ipam node daemon's format, as that daemon would.

Written from the format's description (../shared/reference/nv-ipam.md, "Store"), not
from this project's C code, so that it can judge what the C code writes:

  root {version, checksum, pools}; pools maps a pool key to {name, entries,
  last_pool_config, last_reserved_ip}; entries maps "<containerID>_<ifName>" to
  {container_id, interface_name, ip_address, metadata{create_time, pod_uuid, pod_name,
  pod_namespace, device_id, pool_config_snapshot}}. checksum is FNV-1a-32 of Go's
  json.Marshal of the root with checksum 0: members in the types' order, map keys
  sorted, Go's string escaping. A zero checksum or a mismatch is refused, as the
  daemon refuses to start on it.

  refstore.py FILE        prints "<pool> <ip> <container_id> <interface_name>" per
                          entry, sorted; exit 1 (and why on stderr) when the daemon
                          would refuse the file
  refstore.py edit FILE add POOL IP CONTAINER IFNAME | del CONTAINER IFNAME
                          changes the file as the daemon does on ADD and DEL: read,
                          change, write a new file by rename with its checksum
  refstore.py hold FILE SOCKET
                          stands in for a running daemon: holds its flock on FILE and
                          listens on SOCKET until killed ("held" on stdout once both)
"""
import fcntl
import json
import os
import signal
import socket
import sys


def go_quote(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\r':
            out.append('\\r')
        elif ch == '\t':
            out.append('\\t')
        elif o < 0x20 or ch in '<>&' or o in (0x2028, 0x2029):
            out.append('\\u%04x' % o)
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def go_map(obj, value):
    if obj is None:
        return 'null'
    return '{' + ','.join(go_quote(k) + ':' + value(obj[k]) for k in sorted(obj, key=lambda k: k.encode())) + '}'


def go_struct(obj, members):
    obj = obj or {}
    return '{' + ','.join(go_quote(m) + ':' + enc(obj.get(m)) for m, enc in members) + '}'


def string(v):
    if v is None:
        v = ''
    if not isinstance(v, str):
        raise ValueError('a string field holds %s' % type(v).__name__)
    return go_quote(v)


METADATA = [(m, string) for m in
            ('create_time', 'pod_uuid', 'pod_name', 'pod_namespace', 'device_id', 'pool_config_snapshot')]
ENTRY = [('container_id', string), ('interface_name', string), ('ip_address', string),
         ('metadata', lambda v: go_struct(v, METADATA))]
POOL = [('name', string), ('entries', lambda v: go_map(v, lambda e: go_struct(e, ENTRY))),
        ('last_pool_config', string), ('last_reserved_ip', string)]


def checksum(root):
    text = ('{"version":%d,"checksum":0,"pools":' % root['version']
            + go_map(root.get('pools'), lambda p: go_struct(p, POOL)) + '}')
    h = 0x811c9dc5
    for b in text.encode('utf-8'):
        h = ((h ^ b) * 0x01000193) & 0xffffffff
    return h


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    if not data.strip():
        return {}
    root = json.loads(data.decode('utf-8'))
    if not isinstance(root, dict) or not isinstance(root.get('version'), int):
        raise ValueError('not a store: no version')
    if not root.get('checksum'):
        raise ValueError('checksum not set in store file')
    if checksum(root) != root['checksum']:
        raise ValueError('store file corrupted, checksum mismatch')
    out = []
    for key, pool in (root.get('pools') or {}).items():
        for rkey, e in (pool.get('entries') or {}).items():
            if rkey != '%s_%s' % (e['container_id'], e['interface_name']):
                raise ValueError('pool %s: entry %s has another key than its container and interface' % (key, rkey))
            out.append((key, e['ip_address'], e['container_id'], e['interface_name']))
    return out


def edit(path, args):
    with open(path, 'rb') as f:
        root = json.loads(f.read().decode('utf-8'))
    read(path)  # refuse what the daemon would refuse
    pools = root.setdefault('pools', {})
    if args[0] == 'add':
        pool, ip, cid, ifname = args[1:5]
        p = pools.setdefault(pool, {'name': pool, 'entries': {}, 'last_pool_config': '',
                                    'last_reserved_ip': ''})
        p.setdefault('entries', {})['%s_%s' % (cid, ifname)] = {
            'container_id': cid, 'interface_name': ifname, 'ip_address': ip,
            'metadata': {'create_time': '2026-11-26T00:00:00Z', 'pod_uuid': '', 'pod_name': '',
                         'pod_namespace': '', 'device_id': '', 'pool_config_snapshot': ''}}
        p['last_reserved_ip'] = ip
    elif args[0] == 'del':
        for p in pools.values():
            (p.get('entries') or {}).pop('%s_%s' % (args[1], args[2]), None)
    else:
        raise ValueError('edit: add or del')
    root['checksum'] = 0
    root['checksum'] = checksum(root)
    tmp = path + '.refstore-tmp'
    with open(tmp, 'w') as f:
        json.dump(root, f, separators=(',', ':'))
    os.rename(tmp, path)


def hold(path, sock_path):
    f = open(path, 'rb')
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sock_path)
    s.listen(16)
    print('held', flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        conn, _ = s.accept()
        conn.close()


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == 'edit':
        try:
            edit(sys.argv[2], sys.argv[3:])
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            sys.stderr.write('refstore: edit %s: %s\n' % (sys.argv[2], e))
            return 1
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == 'hold':
        hold(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) != 2:
        sys.stderr.write('usage: refstore.py FILE | edit FILE ... | hold FILE SOCKET\n')
        return 2
    try:
        entries = read(sys.argv[1])
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write('refstore: %s: %s\n' % (sys.argv[1], e))
        return 1
    for e in sorted(entries):
        print(' '.join(e))
    return 0


if __name__ == '__main__':
    sys.exit(main())
