// Builds the ONNX models the benchmark runs in onnxruntime-web, as protobuf
// bytes written by hand: the handful of ModelProto fields used here do not
// justify a dependency, and the encoder keeps the graphs readable.
// Field numbers follow onnx/onnx.proto3.

const kFloat = 1; // TensorProto.DataType.FLOAT
const kInt32 = 6; // TensorProto.DataType.INT32
const kInt64 = 7; // TensorProto.DataType.INT64
const kAttrFloat = 1;
const kAttrInt = 2;
const kAttrTensor = 4;
const kAttrInts = 7;

class Writer {
  constructor() {
    this.parts = [];
    this.size = 0;
  }
  bytes(b) {
    this.parts.push(b);
    this.size += b.length;
    return this;
  }
  varint(value) {
    let v = BigInt(value);
    if (v < 0n) v += 1n << 64n; // int64 two's complement, as protobuf expects
    const out = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      out.push(byte);
    } while (v !== 0n);
    return this.bytes(Uint8Array.from(out));
  }
  tag(field, wireType) {
    return this.varint((field << 3) | wireType);
  }
  int(field, value) {
    return this.tag(field, 0).varint(value);
  }
  float(field, value) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    return this.tag(field, 5).bytes(b);
  }
  lengthDelimited(field, payload) {
    return this.tag(field, 2).varint(payload.length).bytes(payload);
  }
  string(field, s) {
    return this.lengthDelimited(field, new TextEncoder().encode(s));
  }
  message(field, build) {
    const inner = new Writer();
    build(inner);
    return this.lengthDelimited(field, inner.finish());
  }
  finish() {
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const p of this.parts) {
      out.set(p, offset);
      offset += p.length;
    }
    return out;
  }
}

function attribute(w, name, value) {
  w.message(5, (a) => {
    a.string(1, name);
    if (Array.isArray(value)) {
      for (const v of value) a.int(8, v);
      a.int(20, kAttrInts);
    } else if (Number.isInteger(value) && !Object.is(value, -0)) {
      a.int(3, value);
      a.int(20, kAttrInt);
    } else {
      a.float(2, value);
      a.int(20, kAttrFloat);
    }
  });
}

/** A graph node: { op, inputs, outputs, domain?, attrs?: {name: number | number[] | {float}} } */
function node(w, { op, inputs, outputs, domain, attrs = {} }, index) {
  w.message(1, (n) => {
    for (const i of inputs) n.string(1, i);
    for (const o of outputs) n.string(2, o);
    n.string(3, `${op}_${index}`);
    n.string(4, op);
    for (const [name, value] of Object.entries(attrs)) {
      // { float: x } forces a FLOAT attribute even for integral values.
      if (value && typeof value === 'object' && 'float' in value) {
        n.message(5, (a) => a.string(1, name).float(2, value.float).int(20, kAttrFloat));
      } else if (value && typeof value === 'object' && 'tensor' in value) {
        const [dims, data] = value.tensor;
        n.message(5, (a) =>
          a
            .string(1, name)
            .message(5, (t) => tensor(t, '', dims, data))
            .int(20, kAttrTensor),
        );
      } else {
        attribute(n, name, value);
      }
    }
    if (domain) n.string(7, domain);
  });
}

/** A graph input or output; a string in `dims` is a symbolic dimension (dim_param). */
function valueInfo(w, field, name, dims, elementType = kFloat) {
  w.message(field, (v) => {
    v.string(1, name);
    v.message(2, (t) =>
      t.message(1, (tt) => {
        tt.int(1, elementType);
        tt.message(2, (s) => {
          for (const d of dims)
            s.message(1, (dim) => (typeof d === 'string' ? dim.string(2, d) : dim.int(1, d)));
        });
      }),
    );
  });
}

/** TensorProto from a Float32Array, Int32Array or BigInt64Array (raw little-endian bytes). */
function tensor(t, name, dims, data) {
  for (const d of dims) t.int(1, d);
  t.int(2, data instanceof BigInt64Array ? kInt64 : data instanceof Int32Array ? kInt32 : kFloat);
  if (name) t.string(8, name);
  t.lengthDelimited(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

function initializer(w, name, dims, data) {
  w.message(5, (t) => tensor(t, name, dims, data));
}

/**
 * Serialises a single-graph model.
 * @param {{ nodes: object[], inputs: [string, (number|string)[], ('int64'|undefined)?][],
 *           outputs: [string, (number|string)[]][],
 *           initializers?: [string, number[], Float32Array][], opsets: [string, number][] }} g
 * @returns {Uint8Array}
 */
export function encodeModel(g) {
  const w = new Writer();
  w.int(1, 9); // ir_version 9 (ONNX 1.15+, needed by opset 23)
  w.string(2, 'attnscope-bench');
  w.message(7, (graph) => {
    g.nodes.forEach((n, i) => node(graph, n, i));
    graph.string(2, 'attention');
    for (const [name, dims, data] of g.initializers ?? []) initializer(graph, name, dims, data);
    for (const [name, dims, type] of g.inputs)
      valueInfo(graph, 11, name, dims, type === 'int64' ? kInt64 : kFloat);
    for (const [name, dims] of g.outputs) valueInfo(graph, 12, name, dims);
  });
  for (const [domain, version] of g.opsets) {
    w.message(8, (o) => {
      if (domain) o.string(1, domain);
      o.int(2, version);
    });
  }
  return w.finish();
}

/** Additive causal mask (T, T): 0 where key ≤ query, -Infinity above the diagonal. */
export function causalMaskAdditive(T) {
  const mask = new Float32Array(T * T);
  for (let i = 0; i < T; ++i) mask.fill(-Infinity, i * T + i + 1, (i + 1) * T);
  return mask;
}

/**
 * Unfused attention as separate ONNX ops, the way an exported model runs it:
 * scores = Q·Kᵀ → scaled = scores·(1/√d) → masked = scaled + causal_mask → softmax → ·V.
 * Inputs q, k, v are (1, H, T, d). Without a mask the Add is left out (no extra work).
 */
export function unfusedAttentionModel(H, T, d, causal) {
  const shape = [1, H, T, d];
  const nodes = [
    { op: 'Transpose', inputs: ['k'], outputs: ['keys_t'], attrs: { perm: [0, 1, 3, 2] } },
    { op: 'MatMul', inputs: ['q', 'keys_t'], outputs: ['scores'] },
    { op: 'Mul', inputs: ['scores', 'scale'], outputs: ['scaled'] },
  ];
  const initializers = [['scale', [], Float32Array.of(1 / Math.sqrt(d))]];
  let logits = 'scaled';
  if (causal) {
    // causal_mask (T, T) = -Infinity strictly above the diagonal, 0 elsewhere, built
    // in the graph (ConstantOfShape → Trilu) and constant-folded by onnxruntime when
    // the session is created: a T×T initializer in the model bytes made session
    // creation ~9 s slower at T = 4096.
    nodes.push(
      {
        op: 'ConstantOfShape',
        inputs: ['mask_shape'],
        outputs: ['minus_inf'],
        attrs: { value: { tensor: [[1], Float32Array.of(-Infinity)] } },
      },
      { op: 'Trilu', inputs: ['minus_inf', 'one'], outputs: ['causal_mask'], attrs: { upper: 1 } },
      { op: 'Add', inputs: ['scaled', 'causal_mask'], outputs: ['masked'] },
    );
    initializers.push(
      ['mask_shape', [2], BigInt64Array.of(BigInt(T), BigInt(T))],
      ['one', [], BigInt64Array.of(1n)],
    );
    logits = 'masked';
  }
  nodes.push({ op: 'Softmax', inputs: [logits], outputs: ['weights'], attrs: { axis: -1 } });
  nodes.push({ op: 'MatMul', inputs: ['weights', 'v'], outputs: ['output'] });
  return encodeModel({
    nodes,
    initializers,
    inputs: [
      ['q', shape],
      ['k', shape],
      ['v', shape],
    ],
    outputs: [['output', shape]],
    opsets: [['', 17]],
  });
}

/** The standard ONNX Attention operator (opset 23): q, k, v (1, H, T, d), is_causal. */
export function onnxAttentionModel(H, T, d, causal) {
  const shape = [1, H, T, d];
  return encodeModel({
    nodes: [
      {
        op: 'Attention',
        inputs: ['q', 'k', 'v'],
        outputs: ['output'],
        attrs: { is_causal: causal ? 1 : 0, scale: { float: 1 / Math.sqrt(d) } },
      },
    ],
    inputs: [
      ['q', shape],
      ['k', shape],
      ['v', shape],
    ],
    outputs: [['output', shape]],
    opsets: [['', 23]],
  });
}

/**
 * onnxruntime's fused com.microsoft MultiHeadAttention: q, k, v (1, T, H·d) — the
 * caller transposes from (1, H, T, d) outside the timed region; unidirectional = causal.
 */
export function multiHeadAttentionModel(H, T, d, causal) {
  const shape = [1, T, H * d];
  return encodeModel({
    nodes: [
      {
        op: 'MultiHeadAttention',
        domain: 'com.microsoft',
        inputs: ['q', 'k', 'v'],
        outputs: ['output'],
        attrs: { num_heads: H, unidirectional: causal ? 1 : 0, scale: { float: 1 / Math.sqrt(d) } },
      },
    ],
    inputs: [
      ['q', shape],
      ['k', shape],
      ['v', shape],
    ],
    outputs: [['output', shape]],
    opsets: [
      ['', 17],
      ['com.microsoft', 1],
    ],
  });
}

/** y = x·W with W (K, N) as an initializer, the way a linear layer is exported. */
export function matMulModel(M, K, N, weight) {
  return encodeModel({
    nodes: [{ op: 'MatMul', inputs: ['x', 'weight'], outputs: ['y'] }],
    initializers: [['weight', [K, N], weight]],
    inputs: [['x', [M, K]]],
    outputs: [['y', [M, N]]],
    opsets: [['', 17]],
  });
}

/**
 * onnxruntime's com.microsoft GroupQueryAttention (always causal): q (1, T, H·d), k and v
 * (1, T, Hkv·d), no past; seqlens_k = T − 1 and total_sequence_length = T, as for a prompt.
 * Outputs the attention (1, T, H·d) and the present keys and values it builds.
 */
export function groupQueryAttentionModel(H, Hkv, T, d) {
  return encodeModel({
    nodes: [
      {
        op: 'GroupQueryAttention',
        domain: 'com.microsoft',
        inputs: ['q', 'k', 'v', '', '', 'seqlens_k', 'total_sequence_length'],
        outputs: ['output', 'present_key', 'present_value'],
        attrs: { num_heads: H, kv_num_heads: Hkv, scale: { float: 1 / Math.sqrt(d) } },
      },
    ],
    initializers: [
      ['seqlens_k', [1], Int32Array.of(T - 1)],
      ['total_sequence_length', [], Int32Array.of(T)],
    ],
    inputs: [
      ['q', [1, T, H * d]],
      ['k', [1, T, Hkv * d]],
      ['v', [1, T, Hkv * d]],
    ],
    outputs: [
      ['output', [1, T, H * d]],
      ['present_key', [1, Hkv, T, d]],
      ['present_value', [1, Hkv, T, d]],
    ],
    opsets: [
      ['', 17],
      ['com.microsoft', 1],
    ],
  });
}
