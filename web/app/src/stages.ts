// The pipeline as stages: X → Q, K, V → scores → ÷√d → mask → softmax → weights·V →
// output (→ W_O → residual → LayerNorm → feed-forward). Each stage names the
// matrices the engine produced for it.
import type { TensorOut } from 'attnscope';
import type { RunResult } from './compute';
import { fmt } from './format';
import { indexLabels, type MatrixView } from './views/matrix';
import { columnBlock, sliceOf } from './tensor';

export interface Stage {
  id: string;
  label: string;
  explain: (r: RunResult) => string;
  matrices: (r: RunResult, b: number, h: number) => MatrixView[];
}

const cols = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

function mv(
  id: string,
  title: string,
  t: TensorOut,
  b: number,
  h: number | null,
  rowLabels: string[],
  colLabels: string[] | null,
  rowAxis: string,
  colAxis: string,
  kind: 'prob' | 'signed',
): MatrixView {
  const { rows, cols: width, get } = sliceOf(t, b, h ?? 0);
  return {
    id,
    title,
    rows,
    cols: width,
    get,
    rowLabels,
    colLabels: colLabels ?? cols(width, 'd'),
    rowAxis,
    colAxis,
    kind,
  };
}

const tokensOf = (r: RunResult, b: number) => indexLabels(r.model.tokens[b]);
const headName = (r: RunResult, h: number) =>
  r.gpt2 ? ` (layer ${r.gpt2.layer + 1}, head ${h + 1})` : r.model.H > 1 ? ` (head ${h + 1})` : '';

export function stagesFor(r: RunResult): Stage[] {
  const m = r.model;
  const attn =
    (
      name: keyof NonNullable<RunResult['attention']['trace']>,
      title: string,
      kind: 'prob' | 'signed' = 'signed',
    ) =>
    (rr: RunResult, b: number, h: number) => [
      mv(
        name,
        `${title}${headName(rr, h)}`,
        rr.attention.trace![name]!,
        b,
        h,
        tokensOf(rr, b),
        tokensOf(rr, b),
        'query (row i)',
        'key (column j)',
        kind,
      ),
    ];
  const stages: Stage[] = [
    {
      id: 'x',
      label: 'X',
      explain: (rr) =>
        rr.gpt2
          ? `Layer ${rr.gpt2.layer + 1}’s input: GPT-2’s residual stream entering the layer, after the layer’s first LayerNorm (ln_1). The last column is a constant 1: its row in W_Q, W_K and W_V holds the model’s biases.`
          : rr.positional
            ? 'Each token’s static word vector plus its sinusoidal positional encoding. Identical words now differ, because their positions differ.'
            : 'Each token’s static word vector (the same word always has the same vector). Without positional encoding, identical words have identical rows.',
      matrices: (rr, b) => {
        const out = [
          mv(
            'x',
            rr.gpt2 ? `X: layer ${rr.gpt2.layer + 1} input (after ln_1)` : 'X: input embeddings',
            rr.x,
            b,
            null,
            tokensOf(rr, b),
            cols(m.C, 'c'),
            'token (row)',
            'feature (column)',
            'signed',
          ),
        ];
        if (rr.positional)
          out.push(
            mv(
              'positional',
              'Positional encoding',
              { data: rr.positional.data, shape: [1, ...rr.positional.shape] },
              0,
              null,
              tokensOf(rr, b),
              cols(m.C, 'c'),
              'position (row)',
              'feature (column)',
              'signed',
            ),
          );
        return out;
      },
    },
    {
      id: 'qkv',
      label: 'Q, K, V',
      explain: () =>
        'Every token is projected three times: its query (what it looks for) Q = X·W_Q, its key (what it offers) K = X·W_K, and its value (what it passes on) V = X·W_V.',
      matrices: (rr, b, h) => {
        const t = rr.attention.trace!;
        const labels = tokensOf(rr, b);
        // The head's columns of W_Q, W_K and W_V above what they make.
        const weight = (
          name: 'wq' | 'wk' | 'wv',
          title: string,
          width: number,
          prefix: string,
        ): MatrixView => {
          const w = rr.model.weights[name];
          return {
            id: name,
            title: `${title}${headName(rr, h)}`,
            ...columnBlock(w.data, w.rows, w.cols, h * width, width),
            rowLabels: cols(m.C, 'c'),
            colLabels: cols(width, prefix),
            rowAxis: 'input feature (row)',
            colAxis: 'output feature',
            kind: 'signed',
            scaleGroup: 'weights',
          };
        };
        return [
          weight('wq', 'W_Q', m.dK, 'q'),
          weight('wk', 'W_K', m.dK, 'k'),
          weight('wv', 'W_V', m.dV, 'v'),
          ...(
            [
              ['q', 'Q: queries', t.q, m.dK, 'query feature'],
              ['k', 'K: keys', t.k, m.dK, 'key feature'],
              ['v', 'V: values', t.v, m.dV, 'value feature'],
            ] as const
          ).map(([id, title, tensor, width, axis]) =>
            mv(
              id,
              `${title}${headName(rr, h)}`,
              tensor,
              b,
              h,
              labels,
              cols(width, id),
              'token (row)',
              axis,
              'signed',
            ),
          ),
        ];
      },
    },
    {
      id: 'scores',
      label: 'Q·Kᵀ',
      explain: () =>
        'Score (i, j) is the dot product of query i with key j: how well what token i looks for matches what token j offers.',
      matrices: attn('scores', 'Scores Q·Kᵀ'),
    },
    {
      id: 'scaled',
      label: m.scale === true ? '÷√d' : 'scale',
      explain: (rr) => scaleExplain(rr.model),
      matrices: attn('scaled', 'Scaled scores'),
    },
    {
      id: 'masked',
      label: 'mask',
      explain: (rr) =>
        rr.model.maskSpec === 'none'
          ? 'No mask: every query may look at every key.'
          : 'Masked entries become −∞ (hatched grey), so softmax gives them exactly 0 weight. Causal: no looking ahead. Padding: no looking at padding.',
      matrices: attn('masked', 'Masked scores'),
    },
    {
      id: 'weights',
      label: 'softmax',
      explain: () =>
        'softmax along each row (over keys): exp(s − max) / Σ exp. Each row now sums to 1: the share of attention query i gives to each key.',
      matrices: attn('weights', 'Attention weights', 'prob'),
    },
    {
      id: 'headOutputs',
      label: 'weights·V',
      explain: () =>
        'Each output row is the weighted sum of all value vectors, with that query’s attention weights.',
      matrices: (rr, b, h) => [
        mv(
          'headOutputs',
          `Head output weights·V${headName(rr, h)}`,
          rr.attention.trace!.headOutputs,
          b,
          h,
          tokensOf(rr, b),
          cols(m.dV, 'v'),
          'token (row)',
          'value feature',
          'signed',
        ),
      ],
    },
    {
      id: 'concat',
      label: m.H > 1 ? 'concat' : 'output',
      explain: (rr) =>
        rr.model.H > 1
          ? 'The heads’ outputs side by side: head 1’s columns, then head 2’s, …'
          : 'The output: one contextual vector per token.',
      matrices: (rr, b) => [
        mv(
          'concat',
          m.H > 1 ? 'Heads concatenated' : 'Output',
          rr.attention.trace!.concat,
          b,
          null,
          tokensOf(rr, b),
          cols(m.H * m.dV, 'o'),
          'token (row)',
          'output feature',
          'signed',
        ),
      ],
    },
  ];
  if (r.block) {
    const blk = (
      id: string,
      label: string,
      explain: string,
      pick: (rr: RunResult) => TensorOut,
      title: string,
      prefix = 'c',
    ) =>
      stages.push({
        id,
        label,
        explain: () => explain,
        matrices: (rr, b) => [
          mv(
            id,
            title,
            pick(rr),
            b,
            null,
            tokensOf(rr, b),
            cols(pick(rr).shape[pick(rr).shape.length - 1], prefix),
            'token (row)',
            'feature (column)',
            'signed',
          ),
        ],
      });
    blk(
      'wo',
      'W_O',
      'The concatenated heads times W_O, back to d_model columns.',
      (rr) => rr.block!.attention.output,
      'Attention output ·W_O',
    );
    blk(
      'residual1',
      'residual',
      'Residual connection: X + attention output, so each token keeps its own information.',
      (rr) => rr.block!.attentionResidual,
      'X + attention',
    );
    blk(
      'norm1',
      'LayerNorm',
      'LayerNorm: each row shifted to mean 0 and scaled to variance 1.',
      (rr) => rr.block!.norm1,
      'LayerNorm 1',
    );
    blk(
      'ffHidden',
      'FF hidden',
      'Feed-forward, first layer with its activation, applied to each token separately.',
      (rr) => rr.block!.ffHidden,
      'Feed-forward hidden layer',
      'h',
    );
    blk(
      'ffOutput',
      'FF out',
      'Feed-forward, second layer, back to d_model.',
      (rr) => rr.block!.ffOutput,
      'Feed-forward output',
    );
    blk(
      'norm2',
      'block out',
      'Residual + LayerNorm again: the block’s output.',
      (rr) => rr.block!.norm2,
      'Transformer block output',
    );
  }
  return stages;
}

/** What the scale stage did, in the words of the scaling chosen. */
export function scaleExplain(m: RunResult['model']): string {
  if (m.scale === true)
    return `Scores ÷ √d_k = ÷ ${fmt(Math.sqrt(m.dK), 4)} (× ${fmt(m.scaleFactor, 4)}). Dividing by √d_k keeps dot products of long vectors from pushing softmax into one-hot.`;
  if (m.scale === false) return 'No scaling: the scores go to softmax as they are (× 1).';
  const temperature = 1 / m.scale;
  const effect =
    m.scaleFactor === 1
      ? 'so the scores are unchanged'
      : m.scaleFactor > 1
        ? 'a temperature below 1 sharpens softmax towards one-hot'
        : 'a temperature above 1 flattens softmax towards uniform';
  return `Scores ÷ temperature ${fmt(temperature, 6)} (× ${fmt(m.scaleFactor, 6)}): ${effect}.`;
}
