#!/usr/bin/env python3
"""MIT-BIH format 212 (two 12-bit samples in three bytes) to int32 pairs: usage mit212.py IN.dat OUT"""
import struct
import sys

raw = open(sys.argv[1], "rb").read()
out = bytearray()
for i in range(0, len(raw) - 2, 3):
    b0, b1, b2 = raw[i], raw[i + 1], raw[i + 2]
    s0 = b0 | ((b1 & 0x0F) << 8)
    s1 = b2 | ((b1 & 0xF0) << 4)
    s0 -= 4096 if s0 & 0x800 else 0
    s1 -= 4096 if s1 & 0x800 else 0
    out += struct.pack("<ii", s0, s1)
open(sys.argv[2], "wb").write(out)
