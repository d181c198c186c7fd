#!/usr/bin/env python3
"""Sizes of a component: as built, stripped of every custom section (names,
producers; recursively in nested core modules and components), and gzip -9
of the stripped bytes. Prints one JSON object.

    python3 bench/size.py target/component/failmem.wasm [--write-stripped OUT]
"""

import gzip
import json
import sys

CUSTOM, CORE_MODULE, COMPONENT = 0, 1, 4


def leb(data, i):
    result = shift = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, i


def enc(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def strip(data):
    """`data` without custom sections; recurses into nested binaries."""
    assert data[:4] == b"\0asm", "not a wasm binary"
    is_component = data[6:8] == b"\x01\x00"
    out = bytearray(data[:8])
    i = 8
    while i < len(data):
        sid = data[i]
        size, j = leb(data, i + 1)
        body = data[j : j + size]
        i = j + size
        if sid == CUSTOM:
            continue
        if is_component and sid in (CORE_MODULE, COMPONENT):
            body = strip(body)
        out.append(sid)
        out += enc(len(body))
        out += body
    return bytes(out)


def sizes(path):
    data = open(path, "rb").read()
    stripped = strip(data)
    return data, stripped, {
        "component_bytes": len(data),
        "component_stripped_bytes": len(stripped),
        "component_gzip_bytes": len(gzip.compress(stripped, 9, mtime=0)),
    }


if __name__ == "__main__":
    data, stripped, out = sizes(sys.argv[1])
    if "--write-stripped" in sys.argv:
        open(sys.argv[sys.argv.index("--write-stripped") + 1], "wb").write(stripped)
    print(json.dumps(out))
