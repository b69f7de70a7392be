// Reads named tensors out of a .safetensors file that engine.loadModel has already
// accepted (so its header, offsets and shapes are known to be sound). The page needs a
// layer's ln_1 and c_attn parameters to run that layer's attention through the engine's
// selfAttention, which keeps every intermediate for the views; the package's model keeps
// its weights inside wasm memory and does not hand them out.

const kPrefix = 'transformer.';

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

export class FileTensors {
  private readonly entries = new Map<string, Entry>();
  private readonly dataStart: number;

  constructor(private readonly bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const headerLength = Number(view.getBigUint64(0, true));
    const header = JSON.parse(
      new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)),
    ) as Record<string, Entry>;
    this.dataStart = 8 + headerLength;
    for (const [name, entry] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      this.entries.set(name.startsWith(kPrefix) ? name.slice(kPrefix.length) : name, entry);
    }
  }

  /** The tensor `name` (without prefix) as float32, whatever its dtype in the file. */
  get(name: string): Float32Array {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`the file has no tensor ${name}`);
    const [begin, end] = entry.data_offsets;
    const raw = this.bytes.subarray(this.dataStart + begin, this.dataStart + end);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    if (entry.dtype === 'F32') {
      const out = new Float32Array(raw.byteLength / 4);
      for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
      return out;
    }
    const out = new Float32Array(raw.byteLength / 2);
    if (entry.dtype === 'BF16') {
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      return out;
    }
    if (entry.dtype === 'F16') {
      for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
      return out;
    }
    throw new Error(`tensor ${name} has dtype ${entry.dtype}`);
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}
