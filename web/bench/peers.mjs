// The other runtimes attnscope's attention is timed against, one entry each: the main
// benchmark runs them all, paired-bench.mjs one of them by id.
import { createOrtAttention } from './ort-runner.mjs';
import { createTfjsAttention } from './tfjs-runner.mjs';

export const attentionPeers = [
  {
    id: 'ort-graph',
    label: 'onnxruntime-web: MatMul→Mul→Add→Softmax→MatMul',
    create: (p) => createOrtAttention('unfused', p),
  },
  {
    id: 'ort-attention',
    label: 'onnxruntime-web: ONNX Attention op (opset 23)',
    create: (p) => createOrtAttention('attention', p),
  },
  {
    id: 'ort-mha',
    label: 'onnxruntime-web: com.microsoft MultiHeadAttention',
    create: (p) => createOrtAttention('mha', p),
  },
  {
    id: 'tfjs',
    label: 'tfjs-backend-wasm: matMul per head',
    create: (p) => createTfjsAttention('per-head', p),
  },
];
