#!/usr/bin/env python3
"""Crafts tagg subfile indexes for the security tests, as an attacker with a
text editor would: the index checksum is a public formula (CRC-64/XZ).

  craft.py seal OUT           stdin = index text without its last line; writes OUT with index_crc64
  craft.py reopen INDEX       rewrites INDEX as a writer that crashed left it: 'state open'
  craft.py crc FILE           prints the CRC-64/XZ of FILE
  craft.py nvrname INDEX K N  the node-local file name tagg derives for subfile K of N of INDEX
"""
import sys

POLY = 0xC96C5795D7870F42
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc64(data):
    c = 0xFFFFFFFFFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFFFFFFFFFF


def seal(body):
    return body + b"index_crc64 %016x\n" % crc64(body)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "seal":
        open(path, "wb").write(seal(sys.stdin.buffer.read()))
    elif cmd == "reopen":
        text = open(path, "rb").read()
        body = text[: text.rindex(b"index_crc64 ")]
        assert b"\nstate closed\n" in body
        body = body.replace(b"\nstate closed\n", b"\nstate open\n", 1)
        if b"\npad" in body:  # format 3: keep the HDF5 block at byte 512
            body = body.replace(b"\npad", b"\npad  ", 1)
        open(path, "wb").write(seal(body))
    elif cmd == "nvrname":
        import os
        ap = os.path.join(os.getcwd(), path) if not path.startswith("/") else path
        print("%s.%016x.%sof%s" % (os.path.basename(path), crc64(ap.encode()), sys.argv[3], sys.argv[4]))
    elif cmd == "crc":
        print("%016x" % crc64(open(path, "rb").read()))
    else:
        sys.exit("usage: craft.py seal|reopen|crc PATH")


if __name__ == "__main__":
    main()
