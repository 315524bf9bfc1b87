// ort_run.js — runs an ONNX model once on ONNX Runtime's CPU provider with
// several inputs, for tests/onnx_export.py.
//
// usage: node ort_run.js MODULES_DIR MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]
//
// MODULES_DIR holds node_modules/onnxruntime-node.  The inputs (float32 or
// int64 .npy files, C order) feed the model's inputs in order; output i is
// written to OUT_DIR/out<i>.bin (its data as is), and one JSON line lists
// the outputs' {name, type, dims}.
"use strict";
const fs = require("fs");
const path = require("path");

const { readNpy } = require(path.join(__dirname, "..", "bench", "npy.js"));

async function main() {
  const [modules, model, outDir, ...inputs] = process.argv.slice(2);
  if (!outDir) {
    console.error("usage: node ort_run.js MODULES_DIR MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]");
    process.exit(2);
  }
  const ort = require(path.join(path.resolve(modules), "node_modules", "onnxruntime-node"));
  const session = await ort.InferenceSession.create(model, { executionProviders: ["cpu"] });
  const feeds = {};
  inputs.forEach((file, i) => {
    const x = readNpy(file);
    feeds[session.inputNames[i]] = new ort.Tensor(x.type, x.data, x.shape);
  });
  const result = await session.run(feeds);
  const outs = session.outputNames.map((name, i) => {
    const y = result[name];
    fs.writeFileSync(path.join(outDir, `out${i}.bin`), Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
    return { name, type: y.type, dims: y.dims };
  });
  console.log(JSON.stringify(outs));
}

main().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
