#!/usr/bin/env node
// Runs an ONNX model with onnxruntime-node (CPU execution provider): Magneto's independent
// reference and benchmark rival.
//
//   node tools/ort/run_ort.js MODEL.onnx --inputs in0.pb [in1.pb ...] [--outputs-dir DIR]
//                             [--threads N] [--bench RUNS] [--warmup W] [--profile RUNS] [--quiet]
//                             [--no-graph-opt] [--ranges]
//
// --ranges: prints `range<TAB>OUTPUT<TAB>MIN<TAB>MAX` for each float32 output (NaN ignored), the
// calibration statistics of tools/quantize/quantize.py (no output files needed).
// --no-graph-opt: onnxruntime's graph optimizations off, so every node runs as the ONNX graph
// says (a QDQ model dequantizes, computes in float and quantizes, instead of being fused into
// integer QLinear kernels): the reference semantics of the operator documents.
// Inputs are ONNX TensorProto files (as in the ONNX backend test data sets). They bind to the
// model's inputs by the name stored in the file when it matches one, else by position. Outputs
// are written as DIR/output_K.pb (TensorProto, raw_data), K in the model's output order.
// With --bench RUNS: W warm-up runs (default max(2, RUNS/10)), then RUNS timed runs; prints
// `median_ms=X` as the last line.
// With --batch FILE (no other argument): one session after another in this one process, each line
// of FILE a JSON array of the arguments above (e.g. ["m.onnx","--inputs","a.pb","--outputs-dir","o"]);
// a failing line is reported as `run_ort: line N (MODEL): message` and the others still run; exit
// status 1 when one failed. Node and onnxruntime start once (most of a small model's 0.25 s).
// With --profile RUNS: a second session with onnxruntime's profiler on runs RUNS times, and the
// per-node kernel times of its profile are summed per op kind and printed, most time first, as
// `op_kind_ms<TAB>KIND<TAB>MS` (milliseconds per run), then per node as
// `node_ms<TAB>NODE<TAB>KIND<TAB>MS`, before the benchmark's lines.
//
// The TensorProto codec below is hand-rolled (fields dims=1, data_type=2, float_data=4,
// int32_data=5, string_data=6, int64_data=7, name=8, raw_data=9, double_data=10,
// uint64_data=11; packed or unpacked repeated fields; unknown fields skipped) so that the tool
// needs nothing beyond onnxruntime-node.
'use strict';

const fs = require('fs');
const path = require('path');

// ---------------------------------------------------------------- TensorProto data types
const DT = {
  FLOAT: 1, UINT8: 2, INT8: 3, UINT16: 4, INT16: 5, INT32: 6, INT64: 7, STRING: 8, BOOL: 9,
  FLOAT16: 10, DOUBLE: 11, UINT32: 12, UINT64: 13,
};
// data_type -> [ort type name, typed array constructor, element size in bytes]
const TYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  8: ['string', Array, 0],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
  12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};
const ORT_TO_DT = {};
for (const [dt, t] of Object.entries(TYPES)) ORT_TO_DT[t[0]] = Number(dt);

// ---------------------------------------------------------------- protobuf wire format
class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  eof() { return this.pos >= this.buf.length; }
  varint() { // BigInt, unsigned 64-bit
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
    return BigInt.asUintN(64, result);
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  lengthDelimited() { return this.bytes(Number(this.varint())); }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.bytes(8);
    else if (wire === 2) this.lengthDelimited();
    else if (wire === 5) this.bytes(4);
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// Reads a repeated varint field, packed (wire 2) or not (wire 0), appending BigInts to out.
function readVarints(r, wire, out) {
  if (wire === 0) { out.push(r.varint()); return; }
  if (wire !== 2) throw new Error(`bad wire type ${wire} for varint field`);
  const sub = new Reader(r.lengthDelimited());
  while (!sub.eof()) out.push(sub.varint());
}
// Reads a repeated fixed-width field (fixed32 wire 5 / fixed64 wire 1, or packed wire 2).
function readFixed(r, wire, width, out) {
  const one = width === 4 ? 5 : 1;
  let bytes;
  if (wire === one) bytes = r.bytes(width);
  else if (wire === 2) bytes = r.lengthDelimited();
  else throw new Error(`bad wire type ${wire} for fixed${width * 8} field`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i + width <= bytes.length; i += width) {
    out.push(width === 4 ? dv.getFloat32(i, true) : dv.getFloat64(i, true));
  }
}

function decodeTensorProto(buf) {
  const r = new Reader(buf);
  const t = { dims: [], dataType: 0, name: '', raw: null, floats: [], int32s: [], int64s: [],
    doubles: [], uint64s: [], strings: [] };
  while (!r.eof()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: readVarints(r, wire, t.dims); break;
      case 2: t.dataType = Number(r.varint()); break;
      case 4: readFixed(r, wire, 4, t.floats); break;
      case 5: readVarints(r, wire, t.int32s); break;
      case 6: t.strings.push(Buffer.from(r.lengthDelimited()).toString('utf8')); break;
      case 7: readVarints(r, wire, t.int64s); break;
      case 8: t.name = Buffer.from(r.lengthDelimited()).toString('utf8'); break;
      case 9: t.raw = r.lengthDelimited(); break;
      case 10: readFixed(r, wire, 8, t.doubles); break;
      case 11: readVarints(r, wire, t.uint64s); break;
      default: r.skip(wire);
    }
  }
  if (t.dataType === 14 || t.dataType === 15 || t.dataType === 16) {
    throw new Error(`unsupported TensorProto data_type ${t.dataType}`);
  }
  const info = TYPES[t.dataType];
  if (!info) throw new Error(`unsupported TensorProto data_type ${t.dataType}`);
  const [type, Ctor, size] = info;
  const dims = t.dims.map((d) => Number(BigInt.asIntN(64, d)));
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    data = t.strings;
  } else if (t.raw !== null) {
    if (t.raw.length !== count * size) {
      throw new Error(`raw_data has ${t.raw.length} bytes, expected ${count * size}`);
    }
    const copy = new Uint8Array(t.raw); // aligned copy
    data = new Ctor(copy.buffer, 0, count);
  } else {
    data = new Ctor(count);
    let src;
    switch (t.dataType) {
      case DT.FLOAT: src = t.floats; break;
      case DT.DOUBLE: src = t.doubles; break;
      case DT.INT64: src = t.int64s.map((v) => BigInt.asIntN(64, v)); break;
      case DT.UINT64: case DT.UINT32: src = t.uint64s; break;
      default: src = t.int32s; // int32, int16, int8, uint16, uint8, bool, float16 (bits)
    }
    if (src.length !== count) {
      throw new Error(`tensor '${t.name}' has ${src.length} values, expected ${count}`);
    }
    for (let i = 0; i < count; i++) {
      const v = src[i];
      if (Ctor === BigInt64Array || Ctor === BigUint64Array) data[i] = BigInt(v);
      else if (typeof v === 'bigint') {
        data[i] = t.dataType === DT.UINT32 ? Number(BigInt.asUintN(32, v))
          : Number(BigInt.asIntN(32, v));
      } else data[i] = v;
    }
  }
  return { name: t.name, type, dims, data };
}

class Writer {
  constructor() { this.chunks = []; }
  varint(v) {
    let x = BigInt.asUintN(64, BigInt(v));
    const bytes = [];
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x) b |= 0x80;
      bytes.push(b);
    } while (x);
    this.chunks.push(Buffer.from(bytes));
  }
  key(field, wire) { this.varint((field << 3) | wire); }
  bytesField(field, buf) {
    this.key(field, 2);
    this.varint(buf.length);
    this.chunks.push(Buffer.from(buf.buffer ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf));
  }
  finish() { return Buffer.concat(this.chunks); }
}

function encodeTensorProto(name, type, dims, data) {
  const dt = ORT_TO_DT[type];
  if (!dt) throw new Error(`cannot encode tensor type ${type}`);
  const w = new Writer();
  if (dims.length) {
    const packed = new Writer();
    for (const d of dims) packed.varint(BigInt(d));
    w.bytesField(1, packed.finish());
  }
  w.key(2, 0); w.varint(dt);
  if (type === 'string') {
    for (const s of data) w.bytesField(6, Buffer.from(String(s), 'utf8'));
  }
  w.bytesField(8, Buffer.from(name, 'utf8'));
  if (type !== 'string') {
    const [, Ctor] = TYPES[dt];
    let arr = data;
    if (type === 'bool' && !(data instanceof Uint8Array)) arr = Uint8Array.from(data, (b) => (b ? 1 : 0));
    else if (!(data instanceof Ctor)) arr = Ctor.from(data);
    w.bytesField(9, new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength));
  }
  return w.finish();
}

// ---------------------------------------------------------------- command line
function usage(msg) {
  if (msg) console.error(`run_ort: ${msg}`);
  console.error('usage: node run_ort.js MODEL.onnx --inputs in0.pb [in1.pb ...] [--outputs-dir DIR]\n' +
    '                   [--threads N] [--bench RUNS] [--warmup W] [--profile RUNS] [--quiet] [--no-graph-opt] [--ranges]\n' +
    '       node run_ort.js --batch FILE     (one JSON array of the arguments above per line)');
  process.exit(2);
}

// bad(msg) reports a bad argument: usage (exits) on the command line, a throw in a --batch line.
function parseArgs(argv, bad = usage) {
  const a = { model: null, inputs: [], outputsDir: null, threads: 1, bench: 0, warmup: -1, profile: 0, quiet: false, graphOpt: true, ranges: false };
  for (let i = 0; i < argv.length; i++) {
    const s = argv[i];
    const next = () => { if (i + 1 >= argv.length) bad(`${s} needs a value`); return argv[++i]; };
    if (s === '--inputs') {
      while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) a.inputs.push(argv[++i]);
    } else if (s === '--outputs-dir') a.outputsDir = next();
    else if (s === '--threads') a.threads = parseInt(next(), 10);
    else if (s === '--bench') a.bench = parseInt(next(), 10);
    else if (s === '--warmup') a.warmup = parseInt(next(), 10);
    else if (s === '--profile') a.profile = parseInt(next(), 10);
    else if (s === '--quiet') a.quiet = true;
    else if (s === '--no-graph-opt') a.graphOpt = false;
    else if (s === '--ranges') a.ranges = true;
    else if (s === '-h' || s === '--help') bad();
    else if (s.startsWith('--')) bad(`unknown option ${s}`);
    else if (!a.model) a.model = s;
    else bad(`unexpected argument ${s}`);
  }
  if (!a.model) bad('no model given');
  if (!(a.threads >= 1)) bad('--threads must be >= 1');
  if (!(a.bench >= 0)) bad('--bench must be >= 0');
  return a;
}

// The CPU session every run uses: all graph optimizations (none with --no-graph-opt),
// args.threads intra-op threads.
function sessionOptions(args, extra = {}) {
  return {
    executionProviders: ['cpu'],
    graphOptimizationLevel: args.graphOpt ? 'all' : 'disabled',
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    ...extra,
  };
}

// Runs the model `args.profile` times under onnxruntime's profiler and prints the kernel time per
// op kind (per run), most first. The profile is a Chrome trace: events of category "Node" named
// "<node>_kernel_time" carry args.op_name and dur (microseconds).
async function profileOpKinds(ort, args, feeds) {
  const os = require('os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  const session = await ort.InferenceSession.create(args.model, sessionOptions(args, {
    enableProfiling: true,
    profileFilePrefix: path.join(dir, 'ort'),
  }));
  await session.run(feeds);  // warm-up, also profiled: dropped below by counting runs
  for (let i = 0; i < args.profile; i++) await session.run(feeds);
  session.endProfiling();
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length === 0) throw new Error('onnxruntime wrote no profile');
  const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  // Kernel events per node, in run order: the first run's share is the warm-up.
  const perKind = new Map();
  const perNode = new Map();  // "node\tkind" -> ms
  const seen = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name || !e.name.endsWith('_kernel_time') || !e.args) continue;
    const n = (seen.get(e.name) || 0) + 1;
    seen.set(e.name, n);
    if (n === 1) continue;
    const kind = e.args.op_name || 'unknown';
    perKind.set(kind, (perKind.get(kind) || 0) + e.dur / 1000);
    const node = e.name.slice(0, -'_kernel_time'.length);
    const key = `${node}\t${kind}`;
    perNode.set(key, (perNode.get(key) || 0) + e.dur / 1000);
  }
  [...perKind.entries()].sort((x, y) => y[1] - x[1]).forEach(([kind, ms]) => {
    console.log(`op_kind_ms\t${kind}\t${(ms / args.profile).toFixed(4)}`);
  });
  // Per node too (most time first), for a side-by-side with `magnetoc bench --profile`'s steps.
  [...perNode.entries()].sort((x, y) => y[1] - x[1]).forEach(([key, ms]) => {
    console.log(`node_ms\t${key}\t${(ms / args.profile).toFixed(4)}`);
  });
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    console.error(`run_ort: cannot load onnxruntime-node (run scripts/setup.sh): ${e.message}`);
    process.exit(3);
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--batch') {
    if (argv.length !== 2) usage('--batch takes one file and nothing else');
    const ort = loadOrt();
    const lines = fs.readFileSync(argv[1], 'utf8').split('\n');
    let failed = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].trim()) continue;
      let args = null;
      try {
        const list = JSON.parse(lines[i]);
        if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
          throw new Error('not a JSON array of strings');
        }
        args = parseArgs(list, (msg) => { throw new Error(msg || 'bad arguments'); });
        await runOne(ort, args);
      } catch (e) {
        failed++;
        console.error(`run_ort: line ${i + 1} (${args ? args.model : 'unparsed'}): ${e && e.message ? e.message : e}`);
      }
    }
    if (failed) process.exit(1);
    return;
  }
  const args = parseArgs(argv);
  await runOne(loadOrt(), args);
}

async function runOne(ort, args) {
  const session = await ort.InferenceSession.create(args.model, sessionOptions(args));
  const names = session.inputNames;
  if (args.inputs.length !== names.length) {
    throw new Error(`model has ${names.length} inputs (${names.join(', ')}), ${args.inputs.length} given`);
  }
  const feeds = {};
  const decoded = args.inputs.map((f) => decodeTensorProto(fs.readFileSync(f)));
  const byName = decoded.every((t) => names.includes(t.name)) &&
    new Set(decoded.map((t) => t.name)).size === decoded.length;
  decoded.forEach((t, k) => {
    const name = byName ? t.name : names[k];
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });

  const results = await session.run(feeds);

  if (args.outputsDir) {
    fs.mkdirSync(args.outputsDir, { recursive: true });
    session.outputNames.forEach((name, k) => {
      const t = results[name];
      const file = path.join(args.outputsDir, `output_${k}.pb`);
      fs.writeFileSync(file, encodeTensorProto(name, t.type, t.dims.map(Number), t.data));
      if (!args.quiet) console.log(`${name}: ${t.type} [${t.dims.join(',')}] -> ${file}`);
    });
  }

  if (args.ranges) {
    session.outputNames.forEach((name) => {
      const t = results[name];
      if (t.type !== 'float32') return;
      let lo = Infinity, hi = -Infinity;
      for (const v of t.data) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      console.log(`range\t${name}\t${lo}\t${hi}`);
    });
  }

  if (args.profile > 0) await profileOpKinds(ort, args, feeds);

  if (args.bench > 0) {
    const warm = args.warmup >= 0 ? args.warmup : Math.max(2, Math.floor(args.bench / 10));
    for (let i = 0; i < warm; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < args.bench; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((x, y) => x - y);
    const n = times.length;
    const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    if (!args.quiet) {
      console.log(`threads=${args.threads} runs=${n} warmup=${warm} min_ms=${times[0].toFixed(3)} ` +
        `max_ms=${times[n - 1].toFixed(3)}`);
    }
    console.log(`median_ms=${median.toFixed(3)}`);
  }
  if (typeof session.release === 'function') await session.release();
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`run_ort: ${e && e.message ? e.message : e}`);
    process.exit(1);
  });
}

module.exports = { decodeTensorProto, encodeTensorProto };
