// Segment files on disk: listing a journal directory's segments, reading a file
// whole, fsyncing a directory (a new segment's name is durable only then).
import { closeSync, fstatSync, fsyncSync, openSync, readdirSync, readSync } from "node:fs";
import { segmentSeq } from "./segment-format.js";

export function listSegments(dir: string): number[] {
  return readdirSync(dir)
    .map(segmentSeq)
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}

export function readWhole(path: string, from = 0): Buffer {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(Math.max(0, size - from));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** The first `n` bytes of a file (fewer when it is shorter). */
export function readPrefix(path: string, n: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
