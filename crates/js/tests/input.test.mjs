// What only JavaScript can hand the package: objects nested thousands deep, cycles, shared
// references, functions and BigInts, arguments of the wrong type, a custom card by the page's
// id. Each is refused with an Error naming the argument (or read as the CLI would read it), and
// after every refused call the next ordinary call still works: a wasm trap (the stack overflow
// "memory access out of bounds" of issue 33) left the module broken for good.
//
//   node --test crates/js/tests/   (after scripts/build-js.sh)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const vramfit = createRequire(import.meta.url)(path.join(root, 'target', 'npm', 'vramfit'));

const GIB = 2 ** 30;
const ordinary = vramfit.analyze({ batch_size: 8, compile: false }, 'rtx3060');

/** The ordinary calls, each as before: the module was not broken by what came before. */
function stillWorks() {
  assert.deepStrictEqual(vramfit.analyze({ batch_size: 8, compile: false }, 'rtx3060'), ordinary);
  assert.ok(vramfit.rankFixes({ program: 'nanochat', depth: 20 }, 'rtx3060').length > 0);
  assert.equal(vramfit.readOom('CUDA out of memory. Tried to allocate 2.00 GiB').tried_to_allocate_bytes,
    2 * GIB);
  assert.equal(vramfit.defaults('nanochat').depth, 20);
}

/** `call` throws an Error (of `type`) with `field` and a message that includes `says`; then
 * the module still works. */
function refused(call, field, says, type = Error) {
  assert.throws(call, (e) => {
    assert.ok(e instanceof type, `${e?.constructor?.name}: ${e?.message}`);
    assert.equal(e.field, field, e.message);
    assert.ok(e.message.includes(says), e.message);
    assert.ok(e.message.length < 400, e.message);
    return true;
  });
  stillWorks();
}

/** `inner` inside `levels` arrays (levels 0: `inner` itself). */
function inArrays(levels, inner = 1) {
  let v = inner;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

/** `inner` inside `levels` objects, each `{a: …}`. */
function inObjects(levels, inner = 1) {
  let v = inner;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

test('an object 2,000 deep, an array 5,000 deep: refused, and the module keeps working', () => {
  for (const f of [vramfit.analyze, vramfit.rankFixes]) {
    refused(() => f(inObjects(2000)), 'config', 'config nests objects and arrays 128 deep (at config.a.a.a.a');
    refused(() => f(inArrays(5000)), 'config', 'config nests objects and arrays 128 deep (at config[0]');
    refused(() => f({ batch_size: 8 }, { gpu: 'rtx3060', other_gib: inArrays(100000) }), 'gpu',
      'gpu nests objects and arrays 128 deep');
    refused(() => f({ batch_size: 8 }, inObjects(1e5)), 'gpu', 'gpu nests');
  }
});

test('the depth limit is serde_json\'s: an object and its JSON text are refused at the same depth', () => {
  // 127 levels (the config object and 126 arrays) are read, and then refused as a config
  for (const config of [{ batch_size: inArrays(126) }, JSON.stringify({ batch_size: inArrays(126) })]) {
    refused(() => vramfit.analyze(config), 'batch_size', 'has the wrong type');
  }
  refused(() => vramfit.analyze({ batch_size: inArrays(127) }), 'config',
    'config nests objects and arrays 128 deep (at config.batch_size[0][0][0]');
  refused(() => vramfit.analyze(JSON.stringify({ batch_size: inArrays(127) })), 'config',
    'recursion limit exceeded');
});

test('a cyclic config or card: refused, naming where the cycle closes', () => {
  const loop = { batch_size: 8 };
  loop.self = loop;
  refused(() => vramfit.analyze(loop), 'config', 'config is cyclic: config.self refers back to config,');
  const deeper = { program: 'nanochat', config: { depth: 6, more: { list: [1, 2] } } };
  deeper.config.more.list.push(deeper.config);
  refused(() => vramfit.rankFixes(deeper), 'config',
    'config is cyclic: config.config.more.list[2] refers back to config.config,');
  const arr = [];
  arr.push(arr);
  refused(() => vramfit.analyze(arr), 'config', 'config is cyclic: config[0] refers back to config,');
  const card = { gpu: 'rtx3060' };
  card.other_gib = card;
  refused(() => vramfit.analyze({}, card), 'gpu', 'gpu is cyclic: gpu.other_gib refers back to gpu,');
  // the same object twice, side by side, is no cycle
  const shared = { depth: 6 };
  assert.throws(() => vramfit.analyze({ a: shared, b: shared }), { field: 'a' });
  stillWorks();
});

test('at most 100,000 values: shared references that double at every level, a huge array', () => {
  let dag = { batch_size: 8 };
  for (let i = 0; i < 60; i++) dag = { a: dag, b: dag }; // 2^61 values as JSON would write it
  const started = performance.now();
  refused(() => vramfit.analyze(dag), 'config', 'config holds more than 100000 values');
  assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  refused(() => vramfit.analyze({ batch_size: new Array(200000).fill(1) }), 'config',
    'config holds more than 100000 values');
  const sparse = [];
  sparse.length = 2 ** 32 - 1;
  refused(() => vramfit.analyze({ batch_size: sparse }), 'config', 'more than 100000 values');
  refused(() => vramfit.analyze({}, { gpu: 'rtx3060', other_gib: new Array(100001).fill(0) }), 'gpu',
    'gpu holds more than 100000 values');
});

test('the largest real input, the CLI\'s own answer with its fixes, is far within the limit', () => {
  const count = (v) => 1 + (v !== null && typeof v === 'object' ? Object.values(v).map(count)
    .reduce((a, b) => a + b, 0) : 0);
  for (const [config, gpu] of [
    [{ program: 'nanochat', depth: 20, device_batch_size: 32 }, 'rtx3060'],
    [{ batch_size: 64, block_size: 1024 }, 'rtx3060'],
    [{ program: 'build-nanogpt', B: 64 }, 'rtx3060'],
  ]) {
    const answer = { ...vramfit.analyze(config, gpu), fixes: vramfit.rankFixes(config, gpu) };
    assert.ok(count(answer) < 10000, `${count(answer)} values`);
    assert.deepStrictEqual(vramfit.analyze(answer, gpu), vramfit.analyze(config, gpu));
  }
});

test('what JSON cannot hold is refused by its type; what it can is read as its JSON text', () => {
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const cases = [
    [{ batch_size: () => 8 }, 'config.batch_size is a function: config takes only what JSON holds'],
    [{ batch_size: Symbol('8') }, 'config.batch_size is a symbol'],
    [{ batch_size: 8n }, 'config.batch_size is a BigInt (give a number: 8, not 8n)'],
    [{ batch_size: NaN }, 'config.batch_size is NaN'],
    [{ learning_rate: -Infinity }, 'config.learning_rate is -Infinity'],
    [{ batch_size: new Map([['a', 1]]) }, 'config.batch_size is a Map'],
    [{ batch_size: new Date(0) }, 'config.batch_size is a Date'],
    [{ batch_size: new Uint8Array(2) }, 'config.batch_size is a Uint8Array'],
    [{ batch_size: new Number(8) }, 'config.batch_size is a Number'],
    [{ 'two words': [0, 1, { x: 2n }] }, 'config["two words"][2].x is a BigInt'],
    [{ get batch_size() { throw new Error('boom'); } }, 'config.batch_size could not be read: boom'],
    [{ batch_size: revocable.proxy }, 'config.batch_size could not be read:'],
    [new Proxy({}, { ownKeys() { throw new RangeError('no keys'); } }), 'config could not be read: no keys'],
    [() => 8, 'config is a function'],
    [8n, 'config is a BigInt'],
    [new Set([1]), 'config is a Set'],
  ];
  for (const [config, says] of cases) {
    refused(() => vramfit.analyze(config), 'config', says);
  }
  refused(() => vramfit.analyze({}, { gpu: 'rtx3060', other_gib: 1n }), 'gpu',
    'gpu.other_gib is a BigInt');
  refused(() => vramfit.analyze({}, () => 'rtx3060'), 'gpu', 'gpu is a function');

  // as JSON.stringify: a key set to undefined is left out; a class's instance, an object
  // without a prototype and a Proxy of a plain object are plain objects
  const text = (c) => vramfit.analyze(JSON.stringify(c), 'rtx3060');
  const config = { batch_size: 8, compile: false };
  assert.deepStrictEqual(vramfit.analyze({ ...config, dropout: undefined }, 'rtx3060'), text(config));
  class Settings { constructor() { this.batch_size = 8; this.compile = false; } }
  assert.deepStrictEqual(vramfit.analyze(new Settings(), 'rtx3060'), text(config));
  assert.deepStrictEqual(vramfit.analyze(Object.assign(Object.create(null), config), 'rtx3060'), text(config));
  assert.deepStrictEqual(vramfit.analyze(new Proxy(config, {}), 'rtx3060'), text(config));
  assert.deepStrictEqual(vramfit.analyze(config, { gpu: 'rtx3060', other_gib: undefined }), text(config));
  // a safe integer is an integer (8, not 8.0), as in the JSON text; -0 is 0
  assert.deepStrictEqual(vramfit.analyze({ program: 'nanochat', depth: 6, device_batch_size: -0 + 4 }),
    vramfit.analyze('{"program": "nanochat", "depth": 6, "device_batch_size": 4}'));
});

test('readOom() and defaults() given a value of the wrong type: a TypeError naming the parameter', () => {
  const cases = [
    [() => vramfit.readOom(12345), 'text', 'readOom: text must be a string, got number'],
    [() => vramfit.readOom({}), 'text', 'readOom: text must be a string, got object'],
    [() => vramfit.readOom(), 'text', 'readOom: text must be a string, got undefined'],
    [() => vramfit.readOom(null), 'text', 'readOom: text must be a string, got null'],
    [() => vramfit.readOom(['CUDA out of memory']), 'text', 'readOom: text must be a string, got array'],
    [() => vramfit.defaults(5), 'program', 'defaults: program must be a string, got number'],
    [() => vramfit.defaults({ program: 'nanochat' }), 'program', 'defaults: program must be a string, got object'],
    [() => vramfit.defaults(), 'program', 'defaults: program must be a string, got undefined'],
  ];
  for (const [call, field, message] of cases) {
    refused(call, field, message, TypeError);
    assert.throws(call, { message });
  }
  assert.equal(vramfit.readOom('').recognised, false);
});

test("a custom card: {gpu: 'custom', vram_gib}, as the page's id for it, or vram_gib alone", () => {
  const config = { program: 'nanochat', depth: 6 };
  const alone = vramfit.analyze(config, { vram_gib: 16 });
  assert.equal(alone.gpu.id, 'custom');
  assert.equal(alone.gpu.total_bytes, 16 * GIB);
  for (const card of [{ gpu: 'custom', vram_gib: 16 }, { gpu: 'Custom', vram_gib: 16, gpu_note: undefined }]) {
    assert.deepStrictEqual(vramfit.analyze(config, card), alone);
  }
  assert.deepStrictEqual(vramfit.rankFixes(config, { gpu: 'custom', vram_gib: 16, other_gib: 1 }),
    vramfit.rankFixes(config, { vram_gib: 16, other_gib: 1 }));
  // a preset with vram_gib is that preset with other memory, as the CLI's --gpu with --vram-gib
  const resized = vramfit.analyze(config, { gpu: 'rtx3060', vram_gib: 16 });
  assert.equal(resized.gpu.id, 'rtx3060');
  assert.equal(resized.gpu.total_bytes, 16 * GIB);
  refused(() => vramfit.analyze(config, { gpu: 'custom' }), 'vram_gib', 'gpu=custom needs vram_gib');
  refused(() => vramfit.analyze(config, 'custom'), 'vram_gib', 'gpu=custom needs vram_gib');
});

test("a card's errors name the card's own keys (vram_gib, not the CLI's --vram-gib)", () => {
  const cases = [
    [{ gpu: 'custom', vram_gib: 0.1 }, 'vram_gib', 'vram_gib=0.1 is out of range: allowed 0.25 to 4096'],
    [{ vram_gib: 5000 }, 'vram_gib', 'vram_gib=5000 is out of range'],
    [{ gpu: 'rtx3060', context_gib: 100 }, 'context_gib', 'context_gib=100 is out of range: allowed 0 to 64'],
    [{ other_gib: -1 }, 'other_gib', 'other_gib=-1 is out of range'],
    [{ other_gib: 'x' }, 'other_gib', 'other_gib="x" has the wrong type: expected a number of GiB'],
    [{ vram_gib: [16] }, 'vram_gib', 'vram_gib=[16] has the wrong type'],
    [{ gpu: 3060 }, 'gpu', "gpu=3060 has the wrong type: expected a preset's id"],
    [3060, 'gpu', 'gpu=3060 has the wrong type'],
    [{ vram: 3 }, 'vram', 'unknown card key: vram (a card takes gpu, vram_gib, context_gib, other_gib)'],
    [{ gpu: 'rtx9999' }, 'gpu', "unknown GPU 'rtx9999': see gpus(), or give {gpu: \"custom\", vram_gib}"],
    ['rtx9999', 'gpu', "unknown GPU 'rtx9999': see gpus()"],
  ];
  for (const [card, field, says] of cases) {
    refused(() => vramfit.analyze({}, card), field, says);
    assert.throws(() => vramfit.rankFixes({}, card), (e) => !/-gib|--/.test(e.message) && e.field === field);
  }
});

// The number is written by the estimator (crates/engine/src/gpu.rs, gib_to_bytes, with
// decimal::compact), shared with the CLI: plain where JS prints it plain, else with an exponent
// (JS writes 1e+300 where Rust's exponent form writes 1e300; either is compact).
test('a huge or tiny number is echoed compactly, as JS prints it', () => {
  for (const [card, field] of [
    [{ gpu: 'rtx3060', other_gib: -1e-300 }, 'other_gib'],
    [{ vram_gib: 1e300 }, 'vram_gib'],
    [{ gpu: 'rtx3060', context_gib: -5e-324 }, 'context_gib'],
    [{ vram_gib: 0.000001 }, 'vram_gib'],
    [{ vram_gib: 123456789012 }, 'vram_gib'],
  ]) {
    const js = String(card[field]);
    assert.throws(() => vramfit.analyze({}, card), (e) => {
      assert.equal(e.field, field);
      const said = [js, js.replace('e+', 'e')].map((n) => `${field}=${n} is out of range`);
      assert.ok(said.some((s) => e.message.startsWith(s)), `${e.message} (JS: ${js})`);
      return true;
    });
  }
  // a tiny number in range is taken, as 0 bytes
  assert.equal(vramfit.analyze({}, { gpu: 'rtx3060', other_gib: 1e-300 }).gpu.other_bytes, 0);
  stillWorks();
});

// Fuzzing the JS boundary: seeded random values of every kind JS has — numbers at their edges,
// odd strings, BigInts, symbols, functions, dates, maps, typed arrays, holes, getters that throw,
// nesting and cycles — as configs and cards, under every program's keys. Each call answers or
// throws an Error (or TypeError) with a message and a field; none traps, and the module still
// works after every one. The seed is printed by a failure, so it fails again.
test('2,000 random JS values as configs and cards: an answer or a named refusal, never a trap', () => {
  let s = 20261127 >>> 0;
  const r = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const pick = (a) => a[Math.floor(r() * a.length)];
  const KEYS = ['program', 'n_layer', 'n_head', 'n_embd', 'block_size', 'batch_size',
    'gradient_accumulation_steps', 'dtype', 'compile', 'dropout', 'vocab_size', 'allocator', 'world_size',
    'depth', 'device_batch_size', 'max_seq_len', 'device-batch-size', 'B', 'T', 'use_compile',
    'gpu', 'vram_gib', 'context_gib', 'other_gib', '', '__proto__', 'constructor', 'toString', '💥'];
  const SCALARS = [0, -0, 1, 2, 4, 8, 12, 64, -1, 0.5, 1e308, -1e308, 5e-324, NaN, Infinity, -Infinity,
    2 ** 53, 2 ** 64, true, false, null, undefined, '', '8', 'True', 'nanochat', 'build-nanogpt',
    'nanochat-sft', 'rtx3060', 'custom', 'h100', 'x'.repeat(5000), '\u0000', '\uD800', '１２', 10n,
    2n ** 70n, Symbol('s'), () => 1, new Date(0), new Map([['a', 1]]), new Uint8Array(4), /re/];
  const value = (depth) => {
    const x = r();
    if (depth > 5 || x < 0.55) return pick(SCALARS);
    if (x < 0.75) {
      const a = Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      if (r() < 0.1) a[7] = 1; // holes
      return a;
    }
    const o = {};
    for (let i = Math.floor(r() * 5); i > 0; i--) o[pick(KEYS)] = value(depth + 1);
    if (r() < 0.05) o.self = o; // a cycle
    if (r() < 0.03) Object.defineProperty(o, 'batch_size', { get() { throw new Error('a getter'); }, enumerable: true });
    return o;
  };
  for (let i = 0; i < 2000; i++) {
    const config = value(0);
    const card = r() < 0.5 ? undefined : value(1);
    for (const call of [() => vramfit.analyze(config, card), () => vramfit.readOom(config)]) {
      try {
        const out = call();
        assert.ok(out !== null && typeof out === 'object', `call ${i}: ${out}`);
      } catch (e) {
        assert.ok(e instanceof Error, `call ${i}: threw ${String(e)}`);
        assert.ok(!(e instanceof WebAssembly.RuntimeError), `call ${i}: a trap: ${e.message}`);
        assert.ok(typeof e.message === 'string' && e.message.length > 0 && e.message.length < 600,
          `call ${i}: ${e.message}`);
        assert.ok('field' in e, `call ${i}: no field: ${e.message}`);
      }
    }
    if (i % 100 === 0) stillWorks();
  }
  stillWorks();
});
