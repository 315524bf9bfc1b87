// ort_run.js — times one ONNX model on ONNX Runtime's CPU provider, for
// bench/cnn.py.
//
// usage: node ort_run.js MODULES_DIR MODEL.onnx INPUT.npy THREADS RUNS OUT.bin
// (bench/transformer.py uses it too, with int64 token ids as the input)
//
// MODULES_DIR holds node_modules/onnxruntime-node.  The input is a float32
// .npy file fed to the model's first input; intra- and inter-op threads are
// both THREADS.  Three warm-up runs, then RUNS timed runs; prints one JSON
// object: {threads, runs, median_ms, median_cpu_ms (the process's CPU time
// per run, all threads), min_ms, output_shape}, and writes the
// first output's float32 data to OUT.bin (for the comparison with PyTorch).
"use strict";
const fs = require("fs");
const path = require("path");

const { readNpy } = require("./npy.js");

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main() {
  const [modules, model, input, threadsArg, runsArg, out] = process.argv.slice(2);
  if (!out) {
    console.error("usage: node ort_run.js MODULES_DIR MODEL.onnx INPUT.npy THREADS RUNS OUT.bin");
    process.exit(2);
  }
  const ort = require(path.join(path.resolve(modules), "node_modules", "onnxruntime-node"));
  const threads = Number(threadsArg), runs = Number(runsArg);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: threads,
    interOpNumThreads: threads,
    graphOptimizationLevel: "all",
  });
  const x = readNpy(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(x.type, x.data, x.shape) };
  let result;
  for (let i = 0; i < 3; i++) result = await session.run(feeds);
  const times = [], cpu = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e3);
  }
  const y = result[session.outputNames[0]];
  fs.writeFileSync(out, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  console.log(
    JSON.stringify({
      threads,
      runs,
      median_ms: median(times),
      median_cpu_ms: median(cpu),
      min_ms: Math.min(...times),
      output_shape: y.dims,
    }),
  );
}

main().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
