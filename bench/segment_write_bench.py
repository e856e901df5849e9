#!/usr/bin/env python3
"""segment_write_bench: what writing a fresh segment costs on tmpfs, the two ways it can be done.

seg_image_write (engine/segment/seg_build.c) puts a node's rendered image into a new file. Through
the map (posix_fallocate, mmap, copy) tmpfs zeroes every page at its first fault and takes one fault
per page; with pwrite first (then posix_fallocate for the rest) a page written whole is neither
zeroed nor faulted. This times both on files of a segment's size with a random image (CPU time of
this process, so other jobs on the machine count less), interleaved, ROUNDS x FILES files each.
Usage: bench/segment_write_bench.py [DIR (default /dev/shm)] [SEGMENT_KIB (1462)] [ROUNDS (5)] [FILES (300)]
"""
import mmap
import os
import statistics
import sys
import tempfile
import time

parent = sys.argv[1] if len(sys.argv) > 1 else "/dev/shm"
size = int(sys.argv[2]) * 1024 if len(sys.argv) > 2 else 1462 * 1024
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
files = int(sys.argv[4]) if len(sys.argv) > 4 else 300
used = size - 64 * 1024  # the image; the rest (write slots, ring, ledger) starts zero
image = os.urandom(used)


def through_map(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.posix_fallocate(fd, 0, size)
    with mmap.mmap(fd, size) as m:
        m[:used] = image
    os.close(fd)


def pwrite_first(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.pwrite(fd, image, 0)
    os.posix_fallocate(fd, 0, size)
    with mmap.mmap(fd, size) as m:
        m[0:8] = b"hwemu-nd"  # the header's node name, written through the map as the engine does
    os.close(fd)


with tempfile.TemporaryDirectory(dir=parent, prefix="hwemu-segwrite.") as d:
    results = {through_map: [], pwrite_first: []}
    for _ in range(rounds):
        for way in results:
            t0 = time.process_time()
            for i in range(files):
                way(f"{d}/{i}")
            results[way].append((time.process_time() - t0) / files * 1e3)
            for i in range(files):
                os.unlink(f"{d}/{i}")
    for way, ms in results.items():
        print(f"{way.__name__:13s} median {statistics.median(ms):.3f} ms CPU per {size // 1024} KiB segment "
              f"(rounds: {', '.join(f'{x:.3f}' for x in ms)})")
    a, b = (statistics.median(results[w]) for w in (through_map, pwrite_first))
    print(f"pwrite_first / through_map: {b / a:.2f}")
