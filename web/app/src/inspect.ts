// The derivation behind any cell, in real numbers: the engine's value, the terms it is
// made of (taken from the engine's own intermediates), and their double-precision sum.
import type { RunResult } from './compute';
import { h } from './dom';
import { fmt, full } from './format';
import { kPad } from './model';
import { dotTerms, layerNormTerms, softmaxTerms } from './reference';
import type { TensorOut } from 'attnscope';
import type { MatrixView } from './views/matrix';
import { rowOf, sliceOf } from './tensor';

const rowIn = (
  r: RunResult,
  name: 'q' | 'k' | 'v' | 'masked' | 'weights',
  b: number,
  hd: number,
  i: number,
) => rowOf(r.attention.trace![name], b, hd, i);

const kMaxTerms = 24;

function termsList(label: string, terms: string[], sum: number, engine: number): HTMLElement {
  const shown = terms.slice(0, kMaxTerms);
  return h(
    'div',
    { class: 'derivation' },
    h('p', {}, label),
    h(
      'p',
      { class: 'terms' },
      shown.join(' + ') +
        (terms.length > kMaxTerms ? ` + … (${terms.length - kMaxTerms} more)` : ''),
    ),
    h('p', {}, '= ', h('strong', {}, full(sum)), ' (sum in double precision)'),
    h(
      'p',
      {},
      'engine (float32): ',
      h('strong', {}, full(engine)),
      ` · difference ${Math.abs(sum - engine).toExponential(1)}`,
    ),
  );
}

export function inspectCell(
  r: RunResult,
  m: MatrixView,
  b: number,
  hd: number,
  i: number,
  j: number,
): HTMLElement {
  const v = m.get(i, j);
  const model = r.model;
  const tokens = model.tokens[b];
  const box = h(
    'div',
    { class: 'inspect' },
    h('h3', {}, `${m.title} [${i + 1}, ${j + 1}]`),
    h('p', {}, `${m.rowAxis}: ${m.rowLabels[i]} · ${m.colAxis}: ${m.colLabels[j]}`),
    h('p', { class: 'value' }, 'value: ', h('strong', { 'data-full': String(v) }, full(v))),
  );
  const T = model.T;
  switch (m.id) {
    case 'x': {
      const e = sliceOf({ data: model.embeddings, shape: [model.B, T, model.C] }, b).get(i, j);
      box.append(
        h(
          'p',
          {},
          tokens[i] === kPad
            ? 'Padding position: a zero vector.'
            : `Static vector of “${tokens[i].toLowerCase()}”, component ${j + 1}: ${full(e)}.`,
        ),
      );
      if (r.positional)
        box.append(
          h(
            'p',
            {},
            `+ positional encoding PE(${i}, ${j}) = ${full(sliceOf(r.positional).get(i, j))} → ${full(v)}`,
          ),
        );
      break;
    }
    case 'positional':
      box.append(
        h(
          'p',
          {},
          `PE(pos ${i}, dim ${j}) = ${j % 2 === 0 ? 'sin' : 'cos'}(${i} / 10000^(${2 * Math.floor(j / 2)}/${model.C}))`,
        ),
      );
      break;
    case 'q':
    case 'k':
    case 'v': {
      const w = model.weights[m.id === 'q' ? 'wq' : m.id === 'k' ? 'wk' : 'wv'];
      const d = m.id === 'v' ? model.dV : model.dK;
      const col = hd * d + j;
      const x = rowOf(r.x, b, 0, i);
      const wcol = Array.from({ length: model.C }, (_, c) => w.data[c * w.cols + col]);
      const { terms, sum } = dotTerms(x, wcol);
      box.append(
        termsList(
          `Σ_c X[${i + 1}, c] · W_${m.id.toUpperCase()}[c, ${col + 1}]:`,
          terms.map((t, c) => `${fmt(x[c])}·${fmt(wcol[c])}`),
          sum,
          v,
        ),
      );
      break;
    }
    case 'scores': {
      const q = rowIn(r, 'q', b, hd, i);
      const k = rowIn(r, 'k', b, hd, j);
      const { terms, sum } = dotTerms(q, k);
      box.append(
        termsList(
          `q_${i + 1} · k_${j + 1} = Σ_d q[d]·k[d]:`,
          terms.map((_, d) => `${fmt(q[d])}·${fmt(k[d])}`),
          sum,
          v,
        ),
      );
      break;
    }
    case 'scaled':
      box.append(
        h(
          'p',
          {},
          `score × ${full(model.scaleFactor)}${model.scale === true ? ` (1/√${model.dK})` : ''} = ${full(v)}`,
        ),
      );
      break;
    case 'masked': {
      const causal =
        model.maskSpec === 'causal' ||
        (typeof model.maskSpec === 'object' && model.maskSpec.causal);
      const lengths = typeof model.maskSpec === 'object' ? model.maskSpec.lengths : null;
      const reason =
        causal && j > i
          ? `causal mask: key ${j + 1} comes after query ${i + 1}`
          : lengths && j >= lengths[b]
            ? `padding mask: key ${j + 1} is padding (length ${lengths[b]})`
            : 'not masked: the scaled score passes through';
      box.append(h('p', {}, reason));
      break;
    }
    case 'weights': {
      const row = rowIn(r, 'masked', b, hd, i);
      const { max, exps, sum } = softmaxTerms(row);
      box.append(
        h(
          'div',
          { class: 'derivation' },
          h(
            'p',
            {},
            `exp(s[${i + 1}, ${j + 1}] − max) / Σ_j exp(s[${i + 1}, j] − max), max = ${fmt(max, 4)}`,
          ),
          h('p', { class: 'terms' }, `exp(${fmt(row[j], 4)} − ${fmt(max, 4)}) = ${full(exps[j])}`),
          h(
            'p',
            { class: 'terms' },
            `Σ = ${exps
              .slice(0, kMaxTerms)
              .map((e) => fmt(e, 4))
              .join(' + ')}${exps.length > kMaxTerms ? ' + …' : ''} = ${full(sum)}`,
          ),
          h(
            'p',
            {},
            '= ',
            h('strong', {}, sum > 0 ? full(exps[j] / sum) : '0 (fully masked row)'),
            ' (double)',
          ),
          h('p', {}, 'engine (float32): ', h('strong', {}, full(v))),
        ),
      );
      break;
    }
    case 'headOutputs':
    case 'concat': {
      const head = m.id === 'concat' ? Math.floor(j / model.dV) : hd;
      const d = m.id === 'concat' ? j % model.dV : j;
      const w = rowIn(r, 'weights', b, head, i);
      const vals = Array.from({ length: T }, (_, jj) => rowIn(r, 'v', b, head, jj)[d]);
      const { terms, sum } = dotTerms(w, vals);
      box.append(
        termsList(
          `Σ_j weight[${i + 1}, j] · v_j[${d + 1}]${model.H > 1 ? ` (head ${head + 1})` : ''}:`,
          terms.map((_, jj) => `${fmt(w[jj])}·${fmt(vals[jj])}`),
          sum,
          v,
        ),
      );
      break;
    }
    default:
      if (r.block) box.append(blockDerivation(r, m.id, b, i, j, v));
  }
  return box;
}

/** The transformer block's stages: each is a product, a sum or a row normalisation. */
function blockDerivation(
  r: RunResult,
  id: string,
  b: number,
  i: number,
  j: number,
  v: number,
): HTMLElement {
  const blk = r.block!;
  const w = r.model.weights;
  const product = (
    label: string,
    row: Float32Array,
    weight: { rows: number; cols: number; data: Float32Array },
  ) => {
    const col = Array.from({ length: weight.rows }, (_, k) => weight.data[k * weight.cols + j]);
    const { terms, sum } = dotTerms(row, col);
    return {
      sum,
      el: termsList(
        label,
        terms.map((_, k) => `${fmt(row[k])}·${fmt(col[k])}`),
        sum,
        v,
      ),
    };
  };
  const norm = (label: string, input: TensorOut) => {
    const row = rowOf(input, b, 0, i);
    const { mean, variance, value } = layerNormTerms(row, j, 1e-5);
    return h(
      'div',
      { class: 'derivation' },
      h(
        'p',
        {},
        `${label}: (a − mean) / √(variance + ε), ε = 1e-5, over row ${i + 1} (${row.length} values)`,
      ),
      h(
        'p',
        { class: 'terms' },
        `a = ${full(row[j])}, mean = ${full(mean)}, variance = ${full(variance)}`,
      ),
      h('p', {}, '= ', h('strong', {}, full(value)), ' (double)'),
      h('p', {}, 'engine (float32): ', h('strong', {}, full(v))),
    );
  };
  switch (id) {
    case 'wo':
      return product(
        `Σ_k concat[${i + 1}, k] · W_O[k, ${j + 1}]:`,
        rowOf(r.attention.trace!.concat, b, 0, i),
        w.wo,
      ).el;
    case 'residual1':
      return h(
        'p',
        {},
        `x = ${full(rowOf(r.x, b, 0, i)[j])} + attention·W_O = ${full(rowOf(blk.attention.output, b, 0, i)[j])} → ${full(v)}`,
      );
    case 'norm1':
      return norm('LayerNorm of X + attention', blk.attentionResidual);
    case 'ffHidden': {
      const p = product(
        `z = Σ_k norm1[${i + 1}, k] · W₁[k, ${j + 1}]:`,
        rowOf(blk.norm1, b, 0, i),
        w.w1,
      );
      return h(
        'div',
        {},
        p.el,
        h(
          'p',
          {},
          `then the activation ${r.model.activation === 'gelu' ? 'gelu(z) = z·Φ(z)' : 'relu(z) = max(0, z)'} → ${full(v)}`,
        ),
      );
    }
    case 'ffOutput':
      return product(
        `Σ_k hidden[${i + 1}, k] · W₂[k, ${j + 1}]:`,
        rowOf(blk.ffHidden, b, 0, i),
        w.w2,
      ).el;
    case 'norm2':
      return h(
        'div',
        {},
        h(
          'p',
          {},
          `norm1 = ${full(rowOf(blk.norm1, b, 0, i)[j])} + feed-forward = ${full(rowOf(blk.ffOutput, b, 0, i)[j])} → ${full(rowOf(blk.ffResidual, b, 0, i)[j])}`,
        ),
        norm('LayerNorm of norm1 + feed-forward', blk.ffResidual),
      );
    default:
      return h('p', {}, 'Computed by the engine.');
  }
}
