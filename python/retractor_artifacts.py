#!/usr/bin/env python3
"""Read one stored stream of the retractor engine into numpy.

A stream leaves a family of files in the storage directory (storage/artifacts.hpp):
``<id>.desc`` (the schema, text), the data file ``<F>`` or, under ``RETENTION c s``,
segments ``<F>_segment_<k>``, the NULL index ``<F>.meta`` and the update logs
``<F>.shadow`` / ``<F>.meta.shadow``; a ROTATION archive of session N is
``<F>.old<N>`` with ``<F>.meta.old<N>`` and ``<F>_segment_<k>.old<N>``, read
with its own descriptor ``<F>.desc.old<N>`` (archives made before sessions kept
one read with ``<id>.desc``).
This module reads them without the engine, so that a stored run can be analysed
or plotted with numpy alone::

    records, nulls = read_stream("out/mix")      # structured array, bool (n, fields)
    records["mix_0"][~nulls[:, 0]]                # the non-NULL values of field 0
    s = read_records("out/mix", 1000, 10)         # records 1000..1009 only (s.records, s.nulls)
    for s in iter_records("out/mix"):             # a stream of any size, piece by piece
        ...

A read reads only the records it asks for (seek and read, each data file and
segment sized from its length) and the ``.meta`` entries up to the run holding
its last record: memory and time follow the records asked for, not the size
of the files. ``read_stream``/``open_stream`` without a range read them all.

Data records are packed little-endian with no padding, so a numpy structured
dtype maps them byte for byte. RATIONAL (and INTPAIR/IDXPAIR) fields are
sub-records ``(num, den)`` (``(a, b)``), kept as stored; STRING[k] is ``S<k>``.
NULL values are not visible in the record bytes (the engine writes zero): the
``.meta`` index is the authority, one bit per descriptor entry, so one NULL
flag per field (an array field is NULL as a whole).

Corrupt or truncated files raise ArtifactError (a ValueError) naming the file
and the byte offset. usage: retractor_artifacts.py STREAMPATH [N] (the first N
records, reading only those; all of them, piece by piece, without N)
"""

import argparse
import math
import os
import re
import sys
from dataclasses import dataclass, field as dc_field

import numpy as np

__all__ = [
    "ArtifactError",
    "Descriptor",
    "Entry",
    "Stream",
    "fields",
    "format_record",
    "iter_records",
    "masked",
    "open_stream",
    "parse_descriptor",
    "read_descriptor",
    "read_records",
    "read_stream",
]


class ArtifactError(ValueError):
    """A file of the family is corrupt, truncated or not readable as a stream."""

    def __init__(self, path, offset, message):
        self.path, self.offset = path, offset
        where = f"{path}" if offset is None else f"{path}: byte {offset}"
        super().__init__(f"{where}: {message}")


# Element size and numpy dtype of one element, by descriptor type word.
# INTPAIR/IDXPAIR have no descriptor rule in the engine (storage.md 2.1) but are
# accepted here so that a hand-written schema with them still maps.
_PAIR_RAT = np.dtype([("num", "<i4"), ("den", "<i4")])
_PAIR_INT = np.dtype([("a", "<i4"), ("b", "<i4")])
TYPES = {
    "BYTE": np.dtype("u1"),
    "INTEGER": np.dtype("<i4"),
    "UINT": np.dtype("<u4"),
    "FLOAT": np.dtype("<f4"),
    "DOUBLE": np.dtype("<f8"),
    "RATIONAL": _PAIR_RAT,
    "INTPAIR": _PAIR_INT,
    "IDXPAIR": _PAIR_INT,
    "STRING": np.dtype("S1"),  # one byte per character, the width is the count
}
_MAX_RECORD = 1 << 20  # the engine refuses larger records (descriptor.cpp)

# Storage profiles (ir/profiles.def): which ones segment under RETENTION and
# which keep a `.shadow` update log. MEMORY keeps no records on disk; the
# declared kinds read an external file named by REF.
_SEGMENTABLE = {"DEFAULT", "DIRECT"}
_FILE = {"POSIX", "POSIXSHD", "GENERIC"}
_SHADOWED = {"DEFAULT", "POSIXSHD"}


# ------------------------------------------------------------------ descriptor
@dataclass
class Entry:
    """One descriptor entry: a data field, or REF / TYPE / RETENTION / RETMEMORY."""

    kind: str  # "DATA", "REF", "TYPE", "RETENTION", "RETMEMORY"
    type: str = ""  # DATA: the type word
    name: str = ""  # DATA: field name; REF: path; TYPE: profile
    count: int = 1  # DATA: array count (STRING: width in bytes)
    capacity: int = 0  # RETENTION capacity, RETMEMORY ring size
    segments: int = 0  # RETENTION segments

    @property
    def is_data(self):
        return self.kind == "DATA"

    @property
    def size(self):
        """Bytes in a record (0 for configuration entries)."""
        if not self.is_data:
            return 0
        return self.count if self.type == "STRING" else TYPES[self.type].itemsize * self.count


@dataclass
class Descriptor:
    """A parsed ``.desc``: entries in file order (their order is the NULL bit order)."""

    entries: list
    path: str = "<text>"

    @property
    def data_fields(self):
        return [e for e in self.entries if e.is_data]

    @property
    def data_bits(self):
        """Index of each data field's bit in the ``.meta`` bitmap (its entry index)."""
        return [i for i, e in enumerate(self.entries) if e.is_data]

    @property
    def record_size(self):
        return sum(e.size for e in self.entries)

    def _config(self, kind):
        return next((e for e in self.entries if e.kind == kind), None)

    @property
    def ref(self):
        e = self._config("REF")
        return e.name if e else None

    @property
    def profile(self):
        """The TYPE entry upper-cased, DEFAULT without one (what the engine opens)."""
        e = self._config("TYPE")
        return e.name.upper() if e else "DEFAULT"

    @property
    def retention(self):
        e = self._config("RETENTION")
        return (e.capacity, e.segments) if e else (0, 0)

    @property
    def segmented(self):
        return self.profile in _SEGMENTABLE and self.retention != (0, 0)

    def dtype(self):
        """The numpy structured dtype of one record: packed, little-endian."""
        names, formats, seen = [], [], {}
        for e in self.data_fields:
            name = e.name
            # numpy needs unique names; the engine does not compare them.
            if name in seen:
                seen[name] += 1
                name = f"{name}__{seen[e.name]}"
            else:
                seen[name] = 0
            if e.type == "STRING":
                fmt = np.dtype(f"S{e.count}")
            elif e.count == 1:
                fmt = TYPES[e.type]
            else:
                fmt = np.dtype((TYPES[e.type], (e.count,)))
            names.append(name)
            formats.append(fmt)
        dt = np.dtype({"names": names, "formats": formats})  # packed: no align
        assert dt.itemsize == self.record_size
        return dt


class _Scanner:
    """The tokenizer of storage/descriptor.cpp: words, numbers, comments."""

    def __init__(self, text, path):
        self.s, self.i, self.path = text, 0, path

    def fail(self, what):
        raise ArtifactError(self.path, self.i, f"descriptor: {what}")

    def skip(self):
        s = self.s
        while True:
            while self.i < len(s) and s[self.i] in " \t\r\n\v\f":
                self.i += 1
            if s.startswith("/*", self.i):
                depth = 0
                while self.i < len(s):
                    if s.startswith("/*", self.i):
                        depth += 1
                        self.i += 2
                    elif s.startswith("*/", self.i):
                        self.i += 2
                        depth -= 1
                        if depth == 0:
                            break
                    else:
                        self.i += 1
                continue
            if s.startswith("//", self.i) or s.startswith("# ", self.i):
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
                continue
            return

    def peek(self, c):
        self.skip()
        return self.i < len(self.s) and self.s[self.i] == c

    def expect(self, c):
        if not self.peek(c):
            self.fail(f"expected '{c}'")
        self.i += 1

    def word(self):
        self.skip()
        m = re.compile(r"[A-Za-z0-9_$]+").match(self.s, self.i)
        if not m:
            self.fail("expected a word")
        self.i = m.end()
        return m.group()

    def number(self):
        self.skip()
        m = re.compile(r"[0-9]+").match(self.s, self.i)
        if not m:
            self.fail("expected a number")
        if int(m.group()) > 2**31 - 1:
            self.fail(f"number {m.group()} out of range")
        self.i = m.end()
        return int(m.group())


def parse_descriptor(text, path="<text>"):
    """Parses descriptor text as the engine does; errors name the byte offset."""
    sc = _Scanner(text, path)
    entries, record = [], 0
    sc.expect("{")
    while not sc.peek("}"):
        if sc.i >= len(text):
            sc.fail("missing '}'")
        at = sc.i
        w = sc.word()
        if w in TYPES:
            e = Entry("DATA", type=w, name=sc.word())
            if sc.peek("["):
                sc.expect("[")
                e.count = sc.number()
                sc.expect("]")
            elif w == "STRING":
                sc.fail("STRING needs a size")
            if e.count <= 0:
                sc.fail("array size must be positive")
            record += e.size
            if record > _MAX_RECORD:
                sc.fail("record larger than 1 MiB")
        elif w == "REF":
            sc.expect('"')
            end = text.find('"', sc.i)
            if end < 0:
                sc.i = len(text)
                sc.fail("unterminated REF path")
            e = Entry("REF", name=text[sc.i:end])
            sc.i = end + 1
        elif w == "TYPE":
            e = Entry("TYPE", name=sc.word())
        elif w == "RETENTION":
            e = Entry("RETENTION", capacity=sc.number())
            e.segments = sc.number()
        elif w == "RETMEMORY":
            e = Entry("RETMEMORY", capacity=sc.number())
        else:
            sc.i = at
            sc.fail(f"unknown word '{w}'")
        entries.append(e)
    d = Descriptor(entries, path)  # text after the closing brace is ignored
    if d.record_size == 0:
        raise ArtifactError(path, None, "descriptor has no data fields (empty record)")
    return d


def read_descriptor(path):
    """Loads a ``.desc`` file (the text is read as UTF-8, bytes kept by escape)."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    return parse_descriptor(text, path)


# ------------------------------------------------------------------ locating the family
@dataclass
class _Family:
    base: str  # data path of the stream (without segment or .old suffix)
    desc: str
    archive: str = ""  # ".old<N>" of a ROTATION archive

    def data(self):
        return self.base + self.archive

    def arch(self, ext):
        """``<base><ext>`` or, of an archive, ``<base><ext>.old<N>``."""
        return self.base + ext + self.archive


_ARCHIVE = re.compile(r"^(.*)(\.old[0-9]+)$")
_SEGMENT = re.compile(r"^(.*)_segment_[0-9]+(\.shadow)?$")


def _locate(path, desc=None):
    """The family of a path naming the stream: its data base, a ``.desc``, a
    ``.meta``/``.shadow``, a segment or an archive ``X.old<N>``. Without ``desc``
    the descriptor is, of an archive, its session's ``X.desc.old<N>`` when there
    is one, else ``<name up to .old>.desc`` (as xtrdb ``open`` finds them)."""
    path = os.fspath(path)
    d, name = os.path.split(path)
    archive = ""
    m = _ARCHIVE.match(name)
    if m:
        name, archive = m.group(1), m.group(2)
    candidates = [name]
    for ext in (".desc", ".meta.shadow", ".meta", ".shadow"):
        if name.endswith(ext) and len(name) > len(ext):
            candidates.append(name[: -len(ext)])
    for c in list(candidates):
        s = _SEGMENT.match(c)
        if s:
            candidates.append(s.group(1))
    if desc is not None:  # the path is the data file itself
        return _Family(os.path.join(d, name), os.fspath(desc), archive)
    for c in candidates:
        stem = c.split(".old")[0] if ".old" in c else c
        # The layout may have changed since the session: its own descriptor first.
        own = [os.path.join(d, c + ".desc" + archive)] if archive else []
        for dp in own + [os.path.join(d, stem + ".desc")]:
            if os.path.isfile(dp):
                return _Family(os.path.join(d, c), dp, archive)
    raise FileNotFoundError(
        f"no descriptor for {path}: looked for "
        + ", ".join(os.path.join(d, c + ".desc") for c in dict.fromkeys(candidates))
        + " (a SELECT with a FILE clause: pass desc='<dir>/<id>.desc')"
    )


# ------------------------------------------------------------------ reading
# A read holds the records asked for and one piece of a file at a time (this
# many bytes): its memory does not grow with the files' size.
_CHUNK = 1 << 22


def _file_records(path, rec, strict):
    """Whole records in one data file, from its size; a trailing partial record
    (a writer killed mid-record) is an error, or left out when not strict
    (which is what the engine does when it reopens the file)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: data file missing")
    if not os.path.isfile(path):
        raise ArtifactError(path, None, "not a regular file (a device or FIFO is no stored stream)")
    size = os.path.getsize(path)
    whole = size - size % rec
    if whole != size and strict:
        raise ArtifactError(
            path, whole, f"truncated record: {size - whole} of {rec} bytes at the end of a {size}-byte file"
        )
    return whole // rec


@dataclass
class _Part:
    """One data file of a stream: records ``base .. base+n-1`` (global indexes)."""

    path: str
    base: int
    n: int
    shadow: str = ""  # its .shadow update log, "" when none is applied


def _read_part(p, rec, out, a, b, strict):
    """Records ``a .. b-1`` of one data file into ``out`` (their bytes, a
    (b-a, rec) uint8 array) by seek and read, then its ``.shadow`` over them."""
    with open(p.path, "rb") as f:
        f.seek(a * rec)
        mv = memoryview(out).cast("B")
        got = 0
        while got < len(mv):
            k = f.readinto(mv[got:])
            if not k:
                raise ArtifactError(
                    p.path, a * rec + got, f"file ended while reading record {a + got // rec} of {p.n} (it shrank)"
                )
            got += k
    if p.shadow:
        _apply_shadow(p.shadow, out, rec, a, b, strict)


def _last_of(keys):
    """Positions of the last occurrence of each key (the last update wins)."""
    return keys.size - 1 - np.unique(keys[::-1], return_index=True)[1]


def _apply_shadow(path, out, rec, a, b, strict):
    """Applies a data ``.shadow`` log to records ``a .. b-1`` of its file
    (``out``, one row each): entries of 8 + R bytes, a u64 byte position then
    the record; the last entry wins. Positions beyond the file's records are
    never read by the engine either. The whole log is checked, piece by piece."""
    if not os.path.isfile(path):
        return
    size = 8 + rec
    total = os.path.getsize(path)
    m = total // size
    if m * size != total and strict:
        raise ArtifactError(path, m * size, f"truncated shadow entry: {total - m * size} of {size} bytes")
    dt = np.dtype([("pos", "<u8"), ("rec", "u1", (rec,))])
    step = max(1, _CHUNK // size)
    with open(path, "rb") as f:
        for k0 in range(0, m, step):
            raw = f.read(min(step, m - k0) * size)
            ent = np.frombuffer(raw, dt, count=len(raw) // size)
            pos = ent["pos"]
            bad = np.flatnonzero(pos % np.uint64(rec))
            if bad.size:
                k = int(bad[0])
                raise ArtifactError(
                    path, (k0 + k) * size, f"shadow position {int(pos[k])} is not a multiple of the record size {rec}"
                )
            idx = pos // np.uint64(rec)
            sel = np.flatnonzero((idx >= np.uint64(a)) & (idx < np.uint64(b)))
            if sel.size:
                j = idx[sel].astype(np.int64) - a
                last = _last_of(j)
                out[j[last]] = ent["rec"][sel[last]]
            if len(ent) < step:
                break


def _meta_dtype(bits):
    nbytes = (bits + 7) // 8
    return np.dtype([("gap", "u1"), ("count", "<u8"), ("bits", "<u8"), ("map", "u1", (nbytes,))])


def _meta_size(path, bits, header, strict):
    """Whole entries of a ``.meta`` (8-byte header) or ``.meta.shadow`` (no
    header) file, from its size."""
    size = os.path.getsize(path)
    if header and 0 < size < 8:
        raise ArtifactError(path, size, f"index header cut short ({size} of 8 bytes)")
    E = _meta_dtype(bits).itemsize
    start = 8 if header else 0
    body = size - start if size >= start else 0
    n = body // E
    if n * E != body and strict:
        raise ArtifactError(
            path, start + n * E, f"truncated index entry: {body - n * E} of {E} bytes "
            f"(entries of 17 + ceil({bits}/8) bytes for {bits} descriptor entries)"
        )
    return n


def _meta_piece(f, path, bits, header, k0, count):
    """Entries ``k0 .. k0+count-1`` of an index file, checked."""
    dt = _meta_dtype(bits)
    start = 8 if header else 0
    f.seek(start + k0 * dt.itemsize)
    raw = f.read(count * dt.itemsize)
    ent = np.frombuffer(raw, dt, count=len(raw) // dt.itemsize)
    bad = np.flatnonzero(ent["gap"] > 1)
    if bad.size:
        k = int(bad[0])
        raise ArtifactError(
            path, start + (k0 + k) * dt.itemsize, f"index entry {k0 + k}: flag {ent['gap'][k]} is neither 0 nor 1"
        )
    bad = np.flatnonzero(ent["bits"] != np.uint64(bits))
    if bad.size:
        k = int(bad[0])
        raise ArtifactError(
            path, start + (k0 + k) * dt.itemsize + 9,
            f"index entry {k0 + k} holds {int(ent['bits'][k])} bits, the descriptor has {bits} entries",
        )
    return ent


def _unpack(maps, bits, cols):
    """Bitmaps (LSB first, 1 = NULL) to bool rows of the data fields."""
    if maps.shape[0] == 0:
        return np.zeros((0, len(cols)), bool)
    u = np.unpackbits(maps, axis=1, bitorder="little")[:, :bits]
    return u[:, cols].astype(bool)


class _Index:
    """The run-length ``.meta`` of a stream, read piece by piece from a cursor
    that moves on with the reads: a read reads the entries up to the run
    holding its last record, and reads going forward read each entry once."""

    def __init__(self, path, bits, cols, strict):
        self.path, self.bits, self.cols = path, bits, cols
        self.n = _meta_size(path, bits, True, strict)
        self.entry, self.before = 0, 0  # next entry to read, records the entries before it cover

    def fill(self, nulls, lo, hi, end):
        """NULL flags of records ``lo .. hi-1`` into ``nulls`` rows 0 .. hi-lo-1.
        Records the index does not cover stay non-NULL (the writer flushes
        data before index); an index ahead of the data (``end`` records) is cut
        back; a gap entry marks missing time, not records."""
        if lo < self.before:
            self.entry, self.before = 0, 0
        step = max(1, _CHUNK // _meta_dtype(self.bits).itemsize)
        with open(self.path, "rb") as f:
            while self.entry < self.n and self.before < hi:
                k0 = self.entry
                ent = _meta_piece(f, self.path, self.bits, True, k0, min(step, self.n - k0))
                if not len(ent):
                    break  # the file shrank since it was opened
                run = np.flatnonzero(ent["gap"] == 0)
                counts = np.minimum(ent["count"][run], np.uint64(end)).astype(np.int64)
                ends = self.before + np.cumsum(counts)
                starts = ends - counts
                ov = np.flatnonzero((ends > lo) & (starts < hi))
                if ov.size:
                    s, e = np.maximum(starts[ov], lo), np.minimum(ends[ov], hi)
                    rows = np.repeat(_unpack(ent["map"][run[ov]], self.bits, self.cols), e - s, axis=0)
                    at = int(s[0]) - lo
                    nulls[at : at + rows.shape[0]] = rows
                past = np.flatnonzero(ends > hi)
                if past.size:  # the next read may start inside this run
                    self.entry, self.before = k0 + int(run[past[0]]), int(starts[past[0]])
                    break
                self.entry = k0 + len(ent)
                if ends.size:
                    self.before = int(ends[-1])


def _shadow_nulls(path, bits, cols, nulls, lo, hi, strict):
    """``.meta.shadow`` overrides (count field = absolute record index, the
    last entry wins) of records ``lo .. hi-1``; the whole file is checked."""
    n = _meta_size(path, bits, False, strict)
    step = max(1, _CHUNK // _meta_dtype(bits).itemsize)
    with open(path, "rb") as f:
        for k0 in range(0, n, step):
            ent = _meta_piece(f, path, bits, False, k0, min(step, n - k0))
            idx = ent["count"]
            sel = np.flatnonzero((idx >= np.uint64(lo)) & (idx < np.uint64(hi)))
            if sel.size:
                j = idx[sel].astype(np.int64) - lo
                last = _last_of(j)
                nulls[j[last]] = _unpack(ent["map"][sel[last]], bits, cols)
            if len(ent) < step:
                break


def _segments(fam):
    """``<base>_segment_<k>[.old<N>]`` beside the data: the contiguous run of
    indexes ending at the highest one (what the engine keeps at reopen)."""
    d, stem = os.path.split(fam.base)
    pat = re.compile(re.escape(stem) + r"_segment_([0-9]+)" + re.escape(fam.archive) + "$")
    found = sorted(
        (int(m.group(1)), os.path.join(d, n)) for n in os.listdir(d or ".") if (m := pat.match(n))
    )
    start = len(found)
    while start > 0 and (start == len(found) or found[start - 1][0] + 1 == found[start][0]):
        start -= 1
    return found[start:]


def _ref_path(ref, desc_path, ref_dir):
    """A declared source's REF is relative to the engine's working directory:
    ``ref_dir`` when given, else the current directory, the storage
    directory's parent, the storage directory."""
    if os.path.isabs(ref):
        return ref
    if ref_dir is not None:
        return os.path.join(ref_dir, ref)
    sd = os.path.dirname(os.path.abspath(desc_path))
    for c in (ref, os.path.join(os.path.dirname(sd), ref), os.path.join(sd, ref)):
        if os.path.exists(c):
            return c
    return ref


@dataclass
class Stream:
    """Records of a stream read from disk: global indexes ``first ..
    first+len(records)-1``. ``kept .. end-1`` are the records the files hold
    (``kept`` > 0 when RETENTION dropped segments); a whole read has
    ``first == kept`` and ``first + len(records) == end``."""

    descriptor: Descriptor
    records: np.ndarray
    nulls: np.ndarray
    first: int = 0
    files: list = dc_field(default_factory=list)  # data files read, in order
    kept: int = None  # None: first
    end: int = None  # None: first + len(records)

    def __post_init__(self):
        if self.kept is None:
            self.kept = self.first
        if self.end is None:
            self.end = self.first + len(self.records)

    @property
    def names(self):
        return list(self.records.dtype.names)


class _Source:
    """A stream's files, located and sized once (the records they hold then),
    read by ranges of records."""

    def __init__(self, path, desc=None, strict=True, shadow=True, ref_dir=None):
        fam = _locate(path, desc)
        d = read_descriptor(fam.desc)
        rec, prof = d.record_size, d.profile
        self.descriptor, self.dtype, self.strict = d, d.dtype(), strict
        if prof == "MEMORY":
            raise ArtifactError(fam.desc, None, "MEMORY profile: the records live in the engine's memory, none on disk")
        if prof == "TEXTSOURCE":
            raise ArtifactError(fam.desc, None, f"declared TEXTFILE source: its data is the text file '{d.ref}'")
        if d.ref is not None:
            # A REF names the data file verbatim (a declared BINFILE/DEVICE source).
            fam = _Family(_ref_path(d.ref, fam.desc, ref_dir), fam.desc, fam.archive)
        if prof not in _SEGMENTABLE | _FILE | {"DEVICE"}:
            raise ArtifactError(fam.desc, None, f"unsupported storage type '{prof}'")
        shadowed = shadow and prof in _SHADOWED
        self.parts = []
        if d.segmented:
            cap = max(d.retention[0], 1)
            segs = _segments(fam)
            if not segs:
                raise FileNotFoundError(
                    f"{fam.base}_segment_*{fam.archive}: no segment files (RETENTION {d.retention[0]} {d.retention[1]})"
                )
            for j, (k, p) in enumerate(segs):
                n = _file_records(p, rec, strict)
                if n > cap:
                    raise ArtifactError(p, cap * rec, f"segment {k} holds {n} records, more than its capacity {cap}")
                if n < cap and j + 1 < len(segs):
                    raise ArtifactError(
                        p, n * rec, f"segment {k} holds {n} of {cap} records but segment {segs[j + 1][0]} follows"
                    )
                sp = p[: len(p) - len(fam.archive)] + ".shadow" + fam.archive if shadowed else ""
                self.parts.append(_Part(p, k * cap, n, sp))
        else:
            data = fam.data()
            self.parts.append(_Part(data, 0, _file_records(data, rec, strict), fam.arch(".shadow") if shadowed else ""))
        self.kept = self.parts[0].base
        self.end = self.parts[-1].base + self.parts[-1].n
        bits, self.cols = len(d.entries), d.data_bits
        self.index, self.meta_shadow = None, ""
        if prof != "DEVICE":  # a declared source's index is in memory only
            meta, shadow_meta = fam.arch(".meta"), fam.arch(".meta.shadow")
            if os.path.isfile(meta):
                self.index = _Index(meta, bits, self.cols, strict)
            if os.path.isfile(shadow_meta):
                self.meta_shadow = shadow_meta

    def read(self, start=0, count=None):
        """Records from global index ``start`` (from the first kept one when
        ``start`` is below it), at most ``count`` of them (None: to the end)."""
        if start < 0 or (count is not None and count < 0):
            raise ValueError(f"start {start} and count {count} must not be negative")
        d, rec = self.descriptor, self.descriptor.record_size
        lo = min(max(start, self.kept), self.end)
        hi = self.end if count is None else min(self.end, lo + count)
        records = np.empty(hi - lo, self.dtype)
        raw = records.view(np.uint8).reshape(-1, rec)
        files = []
        for p in self.parts:
            a, b = max(lo, p.base) - p.base, min(hi, p.base + p.n) - p.base
            if a < b:
                _read_part(p, rec, raw[p.base + a - lo : p.base + b - lo], a, b, self.strict)
            if a < b or (p.n == 0 and lo <= p.base <= hi):
                files.append(p.path)
        nulls = np.zeros((hi - lo, len(self.cols)), bool)
        if hi > lo:
            if self.index is not None:
                self.index.fill(nulls, lo, hi, self.end)
            if self.meta_shadow:
                _shadow_nulls(self.meta_shadow, len(d.entries), self.cols, nulls, lo, hi, self.strict)
        return Stream(d, records, nulls, lo, files, self.kept, self.end)


def open_stream(path, desc=None, strict=True, shadow=True, ref_dir=None, start=0, count=None):
    """Reads a stream's family: ``path`` names its data file (or its base, a
    ``.desc``, a segment, an archive ``X.old<N>``); ``desc`` overrides the
    descriptor (a SELECT with a FILE clause names its data differently).

    ``start``, ``count``: read only records ``start .. start+count-1`` (global
    indexes; reading begins at the first kept record when ``start`` is below
    it, ``count`` None reads to the end). Only those records are read (seek and
    read) and only the part of the ``.meta`` up to them: memory and time follow
    the records asked for, not the size of the files. Files are sized at open,
    so a partial trailing record or index entry is found by any read; a corrupt
    entry or shadow position is found when a read reaches it.

    ``strict``: a partial trailing record or entry is an error (False: dropped,
    as the engine repairs it at open). ``shadow``: apply the ``.shadow`` update
    logs, as the session that wrote them reads its records (the engine empties
    a DEFAULT store's ``.shadow`` when it reopens it, the ``.meta.shadow`` stays).
    """
    return _Source(path, desc, strict, shadow, ref_dir).read(start, count)


def read_records(path, start=0, count=None, **kw):
    """A :class:`Stream` of records ``start .. start+count-1`` only (see
    open_stream): ``read_records("out/x", 1000, 10).records``."""
    return open_stream(path, start=start, count=count, **kw)


def iter_records(path, chunk=None, start=0, count=None, **kw):
    """The records from ``start`` (at most ``count``) as successive Streams of
    at most ``chunk`` records (default: about 16 MiB of records each), the
    files sized once: a whole stream in bounded memory. Keywords as for
    open_stream."""
    return _chunks(_Source(path, **kw), chunk, start, count)


def _chunks(src, chunk, start, count):
    if chunk is None:
        chunk = max(1, min(1 << 16, (16 << 20) // src.descriptor.record_size))
    if chunk <= 0:
        raise ValueError(f"chunk {chunk} must be positive")
    left = count
    while left is None or left > 0:
        s = src.read(start, chunk if left is None else min(chunk, left))
        if not len(s.records):
            return
        yield s
        start = s.first + len(s.records)
        if left is not None:
            left -= len(s.records)


def read_stream(path, **kw):
    """``(records, nulls)``: the structured record array and a bool array of
    shape (records, data fields), True where the field is NULL. Keywords as
    for open_stream (``start``, ``count`` read a range)."""
    s = open_stream(path, **kw)
    return s.records, s.nulls


def fields(path, desc=None):
    """The data fields as ``(name, type, count)``; count is the array size
    (STRING: its width in bytes)."""
    fam = _locate(path, desc)
    return [(e.name, e.type, e.count) for e in read_descriptor(fam.desc).data_fields]


def masked(records, nulls, name):
    """One field as a numpy masked array, NULLs masked (for plotting, sums)."""
    col = records.dtype.names.index(name)
    v = records[name]
    mask = nulls[:, col]
    if v.ndim > 1:
        mask = np.broadcast_to(mask[:, None], v.shape)
    return np.ma.masked_array(v, mask=mask)


# ------------------------------------------------------------------ xtrdb's text
def _rat_text(num, den):
    """A stored pair made valid the way the engine prints it (ir/values.hpp)."""
    lim = 2**31 - 1
    if den == 0:
        return f"{max(-lim, min(lim, num))}/1"
    g = math.gcd(num, den)
    n, q = num // g, den // g
    if q < 0:
        n, q = -n, -q
    if abs(n) > lim:  # only -2^31/-1 and the like
        n = lim if n > 0 else -lim
    return f"{n}/{q}" if n else "0/1"


def _elem_text(t, v):
    if t in ("BYTE", "INTEGER", "UINT"):
        return str(int(v))
    if t in ("FLOAT", "DOUBLE"):
        return "%.6g" % float(v)
    if t == "RATIONAL":
        return _rat_text(int(v["num"]), int(v["den"]))
    return f"{int(v['a'])},{int(v['b'])}"  # INTPAIR, IDXPAIR


def format_record(stream, i):
    """Record ``i`` (of ``stream.records``) as xtrdb ``list`` prints it:
    ``{ name:value ... }``, array elements separated by a space, ``null``."""
    rec, out = stream.records[i], []
    for k, e in enumerate(stream.descriptor.data_fields):
        name = stream.records.dtype.names[k]
        if stream.nulls[i, k]:
            text = "null"
        elif e.type == "STRING":  # numpy drops trailing NULs; the text ends at the first
            text = bytes(rec[name]).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        elif e.count == 1:
            text = _elem_text(e.type, rec[name])
        else:
            text = " ".join(_elem_text(e.type, x) for x in rec[name])
        out.append(f" {e.name}:{text}")
    return "{" + "".join(out) + " }"


def main(argv=None):
    ap = argparse.ArgumentParser(description="Print a stored retractor stream as xtrdb 'list' does.")
    ap.add_argument("stream", help="data file, its base name, its .desc, a segment or an archive X.old<N>")
    ap.add_argument("n", nargs="?", type=int, help="records to print (default: all)")
    ap.add_argument("--desc", help="the descriptor, when the data file is not named after the stream")
    ap.add_argument("--lenient", action="store_true", help="drop a partial trailing record instead of failing")
    ap.add_argument("--no-shadow", action="store_true", help="ignore the .shadow update logs")
    a = ap.parse_args(argv)
    if a.n is not None and a.n < 0:
        ap.error(f"records to print: {a.n} is negative")
    out = sys.stdout
    out.reconfigure(errors="surrogateescape")
    # Piece by piece: printing N records reads those N (and the index up to
    # them), printing all of them holds one piece at a time.
    try:
        src = _Source(a.stream, desc=a.desc, strict=not a.lenient, shadow=not a.no_shadow)
        if src.kept:
            print(f"# records 0..{src.kept - 1} were dropped by RETENTION", file=sys.stderr)
        for s in _chunks(src, None, 0, a.n):
            for i in range(len(s.records)):
                out.write(format_record(s, i) + "\n")
    except (ValueError, OSError) as e:
        out.flush()
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
