#!/usr/bin/env node
// Rewrites the relaxed fused multiply-adds of a module built by Emscripten
// 3.1.6 (clang 14) into the standard instruction:
//   node scripts/relaxed-simd-opcodes.mjs path/to/module.wasm
// or only checks that a module holds standard relaxed madds and no prototype:
//   node scripts/relaxed-simd-opcodes.mjs --check path/to/module.wasm
//
// clang 14 emits `__builtin_wasm_fma_f32x4(x, y, z)` as the relaxed-SIMD
// proposal's prototype instruction, opcode 0xfd 0xaf 0x01, which no shipping
// engine accepts. Its meaning in that toolchain is x + y·z: binaryen 108 (the
// optimizer emcc runs after linking) constant-folds it that way. The standard
// `f32x4.relaxed_madd` (0xfd 0x85 0x02) computes a·b + c, so each prototype
// becomes
//   local.set z' local.set y' local.set x'   (three fresh v128 locals)
//   local.get y' local.get z' local.get x' f32x4.relaxed_madd   = y·z + x,
// the same value; engines keep the locals in registers. Only the function
// bodies that hold one are re-encoded. Every body is decoded instruction by
// instruction, so only instructions are touched, never an immediate or data
// byte that happens to hold the same bytes. The result is checked with
// WebAssembly.validate when the running engine supports relaxed SIMD (Node 20
// needs --experimental-wasm-relaxed-simd; Chromium ≥ 114 and Node ≥ 22 have
// it on).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const kPrototypeMadd = 0xaf;
const kFinalMadd = 0x105;
const kTypeSection = 1;
const kFunctionSection = 3;
const kCodeSection = 10;
const kV128 = 0x7b;

/** A cursor over the module's bytes, with LEB128 decoding. */
class Reader {
  constructor(bytes, pos = 0) {
    this.bytes = bytes;
    this.pos = pos;
  }
  byte() {
    if (this.pos >= this.bytes.length)
      throw new Error(`unexpected end of module at byte ${this.pos}`);
    return this.bytes[this.pos++];
  }
  uleb() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
      shift += 7;
    }
  }
  sleb() {
    while (this.byte() & 0x80);
  }
  skip(n) {
    this.pos += n;
  }
  memarg() {
    this.uleb();
    this.uleb();
  }
}

const kValueTypes = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x40]);
function blockType(r) {
  if (kValueTypes.has(r.bytes[r.pos])) r.skip(1);
  else r.sleb(); // a type index, as a signed 33-bit LEB
}

/** Skips the immediates of a 0xfd (SIMD) instruction; returns its sub-opcode. */
function simdInstruction(r) {
  const op = r.uleb();
  if (op <= 0x0b || op === 0x5c || op === 0x5d)
    r.memarg(); // loads, v128.store, load_zero
  else if (op === 0x0c || op === 0x0d)
    r.skip(16); // v128.const, i8x16.shuffle
  else if (op >= 0x15 && op <= 0x22)
    r.skip(1); // extract_lane / replace_lane
  else if (op >= 0x54 && op <= 0x5b) {
    r.memarg(); // load_lane / store_lane
    r.skip(1);
  }
  return op;
}

/** Skips the immediates of a 0xfc (saturating truncation, bulk memory, table) instruction. */
function miscInstruction(r) {
  const op = r.uleb();
  if (op <= 7) return;
  if (op === 8) {
    r.uleb();
    r.skip(1);
  } else if (op === 10) r.skip(2);
  else if (op === 11) r.skip(1);
  else if (op === 12 || op === 14) {
    r.uleb();
    r.uleb();
  } else if (op <= 17) r.uleb();
  else throw new Error(`unknown 0xfc instruction ${op} at byte ${r.pos}`);
}

/** Decodes one instruction at r.pos; calls onSimd(op, start) for 0xfd ones. */
function instruction(r, onSimd) {
  const start = r.pos;
  const op = r.byte();
  if (op === 0xfd) return onSimd(simdInstruction(r), start);
  if (op === 0xfc) return miscInstruction(r);
  if (op === 0xfe) {
    // atomics: a memarg, except atomic.fence's single zero byte
    if (r.uleb() === 0x03) r.skip(1);
    else r.memarg();
    return;
  }
  if (op === 0x02 || op === 0x03 || op === 0x04 || op === 0x06) return blockType(r);
  if ([0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x12, 0x18, 0xd2].includes(op)) return void r.uleb();
  if (op >= 0x20 && op <= 0x26) return void r.uleb();
  if (op >= 0x28 && op <= 0x3e) return r.memarg();
  if (op === 0x0e) {
    for (let n = r.uleb(); n >= 0; --n) r.uleb(); // the labels, then the default
    return;
  }
  if (op === 0x11 || op === 0x13) {
    r.uleb();
    r.uleb();
    return;
  }
  if (op === 0x1c) return r.skip(r.uleb());
  if (op === 0x3f || op === 0x40 || op === 0xd0) return r.skip(1);
  if (op === 0x41 || op === 0x42) return r.sleb();
  if (op === 0x43) return r.skip(4);
  if (op === 0x44) return r.skip(8);
  if (op <= 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1) return;
  throw new Error(`unknown opcode 0x${op.toString(16)} at byte ${start}`);
}

/** n as unsigned LEB128 bytes. */
export function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function concat(parts) {
  const result = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((at, part) => (result.set(part, at), at + part.length), 0);
  return result;
}

/** Parameter counts of the defined functions, in code-section order. */
function parameterCounts(bytes) {
  const r = new Reader(bytes, 8);
  const typeParams = [];
  let typeOfDefined = [];
  while (r.pos < bytes.length) {
    const id = r.byte();
    const end = r.uleb() + r.pos;
    if (id === kTypeSection) {
      for (let n = r.uleb(); n > 0; --n) {
        if (r.byte() !== 0x60) throw new Error(`unsupported type form at byte ${r.pos - 1}`);
        const params = r.uleb();
        typeParams.push(params);
        r.skip(params);
        r.skip(r.uleb());
      }
    } else if (id === kFunctionSection) {
      typeOfDefined = Array.from({ length: r.uleb() }, () => r.uleb());
    }
    r.pos = end;
  }
  return typeOfDefined.map((t) => typeParams[t]);
}

/** The standard madd on operands (x, y, z) stacked for the prototype's x + y·z. */
function reorderedMadd(firstLocal) {
  const [x, y, z] = [0, 1, 2].map((i) => uleb(firstLocal + i));
  return [
    0x21,
    ...z,
    0x21,
    ...y,
    0x21,
    ...x,
    0x20,
    ...y,
    0x20,
    ...z,
    0x20,
    ...x,
    0xfd,
    ...uleb(kFinalMadd),
  ];
}

/**
 * Rewrites every prototype relaxed madd of `bytes` as described above.
 * @returns {{bytes: Uint8Array, rewritten: number, final: number}} the new
 *   module (the input itself when `dryRun` or nothing was found), how many
 *   prototype madds were found, and how many standard ones were already there
 */
export function rewriteRelaxedMadd(bytes, { dryRun = false } = {}) {
  const r = new Reader(bytes, 8);
  let rewritten = 0;
  let final = 0;
  const out = [bytes.subarray(0, 8)];
  while (r.pos < bytes.length) {
    const sectionStart = r.pos;
    const id = r.byte();
    const end = r.uleb() + r.pos;
    if (id !== kCodeSection) {
      out.push(bytes.subarray(sectionStart, end));
      r.pos = end;
      continue;
    }
    const params = parameterCounts(bytes);
    const count = r.uleb();
    const bodies = [];
    for (let f = 0; f < count; ++f) {
      const bodyEnd = r.uleb() + r.pos;
      const bodyStart = r.pos;
      const groups = [];
      for (let n = r.uleb(); n > 0; --n) groups.push([r.uleb(), r.byte()]);
      const codeStart = r.pos;
      const madds = [];
      while (r.pos < bodyEnd) {
        instruction(r, (op, start) => {
          if (op === kFinalMadd) ++final;
          if (op === kPrototypeMadd) madds.push([start, r.pos]);
        });
      }
      if (r.pos !== bodyEnd)
        throw new Error(`function ${f}: body decoded past its end (byte ${r.pos})`);
      rewritten += madds.length;
      if (madds.length === 0 || dryRun) {
        bodies.push(bytes.subarray(bodyStart, bodyEnd));
        continue;
      }
      const firstLocal = params[f] + groups.reduce((sum, [n]) => sum + n, 0);
      const locals = [...uleb(groups.length + 1)];
      for (const [n, type] of [...groups, [3, kV128]]) locals.push(...uleb(n), type);
      const parts = [Uint8Array.from(locals)];
      const madd = Uint8Array.from(reorderedMadd(firstLocal));
      let from = codeStart;
      for (const [start, next] of madds) {
        parts.push(bytes.subarray(from, start), madd);
        from = next;
      }
      parts.push(bytes.subarray(from, bodyEnd));
      bodies.push(concat(parts));
    }
    const content = [Uint8Array.from(uleb(count))];
    for (const body of bodies) content.push(Uint8Array.from(uleb(body.length)), body);
    const contentBytes = concat(content);
    out.push(Uint8Array.from([id, ...uleb(contentBytes.length)]), contentBytes);
    r.pos = end;
  }
  if (dryRun || rewritten === 0) return { bytes, rewritten, final };
  return { bytes: concat(out), rewritten, final };
}

/** Whether this engine accepts relaxed SIMD (a tiny module using relaxed_madd; the package's
 * hasRelaxedSimd in web/lib/load.ts probes with the same bytes). */
export function engineHasRelaxedSimd() {
  // (func (param v128) (result v128) local.get 0 local.get 0 local.get 0 f32x4.relaxed_madd)
  // prettier-ignore
  const probe = Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x06, 0x01, 0x60, 0x01, 0x7b, 0x01, 0x7b,
    0x03, 0x02, 0x01, 0x00,
    0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x00, 0x20, 0x00, 0xfd, 0x85, 0x02, 0x0b,
  ]);
  return WebAssembly.validate(probe);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv[2] === '--check';
  const file = process.argv[check ? 3 : 2];
  if (!file) {
    console.error('usage: node scripts/relaxed-simd-opcodes.mjs [--check] module.wasm');
    process.exit(2);
  }
  const { bytes, rewritten, final } = rewriteRelaxedMadd(readFileSync(file), { dryRun: check });
  if (check) {
    if (rewritten > 0 || final === 0) {
      throw new Error(
        `${file}: ${rewritten} prototype and ${final} final relaxed madds; rebuild the relaxed flavour`,
      );
    }
    console.log(`${file}: ${final} f32x4.relaxed_madd, no prototype opcode`);
    process.exit(0);
  }
  // A relaxed build without a single madd means the helper was not compiled
  // in: fail rather than ship a copy of the plain SIMD module.
  if (rewritten === 0) throw new Error(`${file}: no prototype relaxed madd found`);
  const validated = engineHasRelaxedSimd();
  if (validated && !WebAssembly.validate(bytes))
    throw new Error(`${file}: invalid after the rewrite`);
  writeFileSync(file, bytes);
  const checked = validated ? 'validated' : 'not validated: this engine lacks relaxed SIMD';
  console.log(
    `${file}: ${rewritten} prototype relaxed fma rewritten to f32x4.relaxed_madd (${checked})`,
  );
}
