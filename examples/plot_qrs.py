#!/usr/bin/env python3
"""Plot the Pan-Tompkins QRS detector's stored output (MIT-BIH record 205) to a PNG.

Runs nothing itself: it reads the artifacts a run of the detector left in its
storage directory (python/retractor_artifacts.py, numpy only) and draws the
ECG with the detected QRS complexes and, for rec205-qrs.rql, the integrated
envelope against the adaptive threshold. With --atr the reference beat
annotations of the record are drawn too, so the detections can be judged.

Producing the artifacts (from the repository root; R is the shared data):

    R=/work/shared/bench-data/rec205 B=$PWD/build W=/tmp/qrs
    mkdir -p $W/out $W/tmp && cd $W
    python3 $OLDPWD/test/qrs/mit212.py $R/205.dat rec205   # int32 pairs (or $B/bench/mit212)
    cp $R/bp_coef.txt $R/d_coef.txt .
    # store the output stream only (the stages stay VOLATILE)
    { echo "STORAGE 'out'"; sed -e '/STREAM qrs_out/s/ VOLATILE$//' $R/rec205-qrs.rql; } > qrs.rql
    TMPDIR=$W/tmp $B/tools/xretractor qrs.rql --no-clock -k -r -m 20000   # 20000 samples, 55 s
    cd $OLDPWD && python3 examples/plot_qrs.py $W/out --atr $R/205.atr -o $W/qrs.png

rec205-detect.rql / rec205-detect-int.rql work the same way (their stream is
detect_out: MLII, V1, detection). Record k of the output stream is ECG sample
k + origin; the origin is found by matching the stored MLII column against the
declared source `ecg` (its REF file rec205, beside the storage directory), or
given with --origin.

usage: plot_qrs.py STORAGE_DIR [-o PNG] [--start S] [--seconds S] [--atr FILE] [--origin N]
"""

import argparse
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import retractor_artifacts as ra  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FS = 360.0  # MIT-BIH sampling rate, the streams' interval 1/360
BEATS = set(range(1, 14)) | {16, 25, 30, 31, 34, 35, 37, 38}  # MIT annotation codes that are beats


def column(records, nulls, k):
    """Field k as float64, NULL as NaN; a RATIONAL is num/den."""
    name = records.dtype.names[k]
    v = records[name]
    out = v["num"] / v["den"].astype(np.float64) if v.dtype.names else v.astype(np.float64)
    out = np.where(nulls[:, k], np.nan, out)
    return out


def read_atr(path):
    """Sample positions of the beat annotations in a MIT format annotation
    file: 16-bit words, code in the top 6 bits, time increment in the low 10."""
    w = np.fromfile(path, "<u2")
    t, i, beats = 0, 0, []
    while i < len(w):
        code, val = int(w[i]) >> 10, int(w[i]) & 0x3FF
        if code == 0 and val == 0:
            break
        if code == 59:  # SKIP: a 32-bit interval follows, high word first
            t += (int(w[i + 1]) << 16) | int(w[i + 2])
            i += 3
            continue
        if code == 63:  # AUX: val bytes of text, padded to a word
            i += 1 + (val + 1) // 2
            continue
        if code in (60, 61, 62):  # NUM, SUB, CHN
            i += 1
            continue
        t += val
        if code in BEATS:
            beats.append(t)
        i += 1
    return np.array(beats, np.int64)


def find_origin(storage, mlii_centred):
    """The ECG sample of output record 0: where the source's MLII matches."""
    try:
        src, _ = ra.read_stream(os.path.join(storage, "ecg"))
    except (OSError, ValueError) as e:
        print(f"note: no source to align with ({e}); --origin 0", file=sys.stderr)
        return 0
    probe = mlii_centred[:2000] + 900
    x = src["MLII"].astype(np.float64)
    for o in range(0, min(5000, len(x) - len(probe))):
        if np.array_equal(x[o : o + len(probe)], probe):
            return o
    print("note: output does not match the source; --origin 0", file=sys.stderr)
    return 0


def events(positive, gap):
    """(start, end) index pairs of the runs where `positive` holds, runs
    closer than `gap` samples merged (one QRS, not two)."""
    idx = np.flatnonzero(positive)
    if idx.size == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) > gap)
    starts = np.r_[idx[0], idx[cut + 1]]
    ends = np.r_[idx[cut], idx[-1]]
    return list(zip(starts, ends))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("storage", help="the STORAGE directory of the detector's run")
    ap.add_argument("-o", "--output", default="qrs.png")
    ap.add_argument("--start", type=float, default=0.0, help="seconds into the output stream")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the plotted window")
    ap.add_argument("--atr", help="the record's reference annotations (205.atr)")
    ap.add_argument("--origin", type=int, help="ECG sample of output record 0 (default: found)")
    a = ap.parse_args(argv)

    for stream in ("qrs_out", "detect_out"):
        if os.path.exists(os.path.join(a.storage, stream + ".desc")):
            break
    else:
        sys.exit(f"{a.storage}: neither qrs_out nor detect_out stored (was VOLATILE removed from it?)")
    rec, nulls = ra.read_stream(os.path.join(a.storage, stream))
    if len(rec) == 0:
        sys.exit(f"{a.storage}/{stream}: no records")
    ecg = column(rec, nulls, 0)
    det = column(rec, nulls, 2)
    env = column(rec, nulls, 1) if stream == "qrs_out" else None  # mwi*5; detect_out has V1 there
    origin = a.origin if a.origin is not None else find_origin(a.storage, ecg)

    qrs = events(det > 0, int(0.2 * FS))
    # The envelope lags the QRS (filters and the 30-sample window): the R peak
    # is the largest |ECG| from 150 ms before a detection run to its end.
    peaks = []
    for s, e in qrs:
        b = max(0, s - int(0.15 * FS))
        peaks.append(b + int(np.nanargmax(np.abs(ecg[b : e + 1]))))
    peaks = np.array(peaks, np.int64)

    t = (np.arange(len(rec)) + origin) / FS
    lo = int(a.start * FS)
    hi = min(len(rec), lo + int(a.seconds * FS))
    if lo >= hi:
        sys.exit(f"window starts after the {len(rec) / FS:.1f} s stored")
    win = slice(lo, hi)

    rows = 3 if env is not None else 2
    fig, ax = plt.subplots(rows, 1, figsize=(16, 3 * rows), sharex=True)
    ax[0].plot(t[win], ecg[win], lw=0.8, color="black", label="MLII − 900 (ADC units)")
    for s, e in qrs:
        if e >= lo and s < hi:
            ax[0].axvspan(t[max(s, lo)], t[min(e, hi - 1)], color="tab:orange", alpha=0.25, lw=0)
    pk = peaks[(peaks >= lo) & (peaks < hi)]
    ax[0].plot(t[pk], ecg[pk], "v", color="tab:red", ms=7, label=f"detected QRS ({len(pk)})")
    title = f"{stream}: Pan-Tompkins QRS detection, MIT-BIH record 205 (origin sample {origin})"
    if a.atr:
        ref = read_atr(a.atr) - origin
        inwin = ref[(ref >= lo) & (ref < hi)]
        y = np.nanmax(ecg[win]) * 1.08
        ax[0].plot(t[inwin], np.full(inwin.shape, y), "|", color="tab:blue", ms=12, mew=2,
                   label=f"reference beats, 205.atr ({len(inwin)})")
        # Over the whole stored run: reference beats with a detection within 150 ms.
        refall = ref[(ref >= 0) & (ref < len(rec))]
        if len(peaks) and len(refall):
            near = np.abs(refall[:, None] - peaks[None, :]).min(axis=1) <= int(0.15 * FS)
            title += f" — {near.sum()}/{len(refall)} reference beats detected, {len(peaks)} detections"
    ax[0].set_ylabel("ECG")
    ax[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax[0].set_title(title, fontsize=10)
    if env is not None:
        thr = env - det  # det = (mwi − 2·thr)·5, env = mwi·5
        ax[1].plot(t[win], env[win], lw=0.9, color="tab:green", label="MWI envelope ×5")
        ax[1].plot(t[win], thr[win], lw=0.9, color="tab:purple", label="adaptive threshold (2 × 0.5 s mean) ×5")
        ax[1].set_ylabel("envelope")
        ax[1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    d = ax[rows - 1]
    d.plot(t[win], det[win], lw=0.8, color="tab:gray")
    d.fill_between(t[win], 0, det[win], where=det[win] > 0, color="tab:orange", alpha=0.6, label="detection > 0")
    d.axhline(0, lw=0.5, color="black")
    d.set_ylabel("detection ×5")
    d.set_xlabel("time in the record (s)")
    d.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"{a.output}: {hi - lo} samples of {len(rec)}, {len(peaks)} QRS detected in the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
