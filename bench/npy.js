// npy.js — reading .npy files for the ONNX Runtime runners (bench/ort_run.js,
// tests/ort_run.js).
"use strict";
const fs = require("fs");

// A float32 or int64 little-endian C-order .npy file: {type, shape, data}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString("latin1", 1, 6) !== "NUMPY") throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString("latin1", major === 1 ? 10 : 12, start);
  const type = /'descr':\s*'<f4'/.test(header) ? "float32" : /'descr':\s*'<i8'/.test(header) ? "int64" : null;
  if (!type || /'fortran_order':\s*True/.test(header))
    throw new Error(`${file}: expected float32 or int64 in C order, got ${header.trim()}`);
  const shape = header
    .match(/'shape':\s*\(([^)]*)\)/)[1]
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length)
    .map(Number);
  const bytes = buf.subarray(start);
  const raw = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  const data = type === "float32" ? new Float32Array(raw) : new BigInt64Array(raw);
  return { type, shape, data };
}

module.exports = { readNpy };
