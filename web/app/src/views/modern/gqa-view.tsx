// Grouped-query and multi-query attention on the visitor's tokens: fewer key/value
// heads than query heads. Which query heads share which kv head, each query head's
// weights as the engine computes them with kvShape, and what the KV cache saves.
import { useState } from 'preact/hooks';
import { fmt, full } from '../../format';
import { colorScale } from '../colors';
import { indexLabels } from '../matrix';
import type { ViewProps } from '../types';
import { ClipNote } from './clip-note';
import { CellGrid } from './cell-grid';
import { fitting, headTensors, readiness, runKey, useEngine, type HeadTensors } from './engine-call';
import { Pick } from './fields';
import { kvCacheBytes } from './kv-bytes';

const kGroupColors = ['#b34700', '#5e3c99', '#1b7837', '#2166ac', '#8c510a', '#c51b7d', '#4d4d4d', '#01665e'];

/**
 * Hkv kv heads from the page's H: each group's keys and values averaged, the way
 * the GQA paper (Ainslie et al., 2023) turns a multi-head checkpoint into a grouped one.
 */
export function pooledKv(t: HeadTensors, Hkv: number): { k: Float32Array; v: Float32Array } {
  const group = t.H / Hkv;
  const pool = (data: Float32Array, d: number) => {
    const out = new Float32Array(Hkv * t.T * d);
    const n = t.T * d;
    for (let h = 0; h < t.H; h++) {
      const g = Math.floor(h / group);
      for (let x = 0; x < n; x++) out[g * n + x] += data[h * n + x] / group;
    }
    return out;
  };
  return { k: pool(t.k, t.dK), v: pool(t.v, t.dV) };
}

export const divisorsOf = (H: number) =>
  Array.from({ length: H }, (_, k) => H - k).filter((n) => H % n === 0);

function Sharing({ H, Hkv, head }: { H: number; Hkv: number; head: number }) {
  const w = Math.max(320, Math.min(640, 40 * H + 40));
  const x = (k: number, n: number) => 20 + ((k + 0.5) * (w - 40)) / n;
  const group = H / Hkv;
  const box = Math.min(34, (w - 40) / H - 4);
  return (
    <svg
      class="gqa-sharing"
      width={w}
      height={130}
      viewBox={`0 0 ${w} 130`}
      role="img"
      aria-label={`${H} query heads share ${Hkv} key/value head${Hkv > 1 ? 's' : ''}: ${Array.from({ length: Hkv }, (_, g) => `kv head ${g + 1} serves query heads ${g * group + 1}–${(g + 1) * group}`).join('; ')}`}
      font-family="system-ui, sans-serif"
      font-size="11"
    >
      <text x={4} y={12} fill="currentColor">query heads</text>
      <text x={4} y={126} fill="currentColor">key/value heads (the cache)</text>
      {Array.from({ length: H }, (_, h) => {
        const g = Math.floor(h / group);
        return (
          <g>
            <line x1={x(h, H)} y1={40} x2={x(g, Hkv)} y2={92} stroke={kGroupColors[g % 8]} stroke-width={h === head ? 3 : 1.5} />
            <rect x={x(h, H) - box / 2} y={18} width={box} height={22} rx={3} fill={kGroupColors[g % 8]} stroke={h === head ? 'currentColor' : 'none'} stroke-width={2} />
            <text x={x(h, H)} y={33} text-anchor="middle" fill="#fff">{`q${h + 1}`}</text>
          </g>
        );
      })}
      {Array.from({ length: Hkv }, (_, g) => (
        <g>
          <rect x={x(g, Hkv) - 22} y={92} width={44} height={22} rx={3} fill={kGroupColors[g % 8]} />
          <text x={x(g, Hkv)} y={107} text-anchor="middle" fill="#fff">{`kv${g + 1}`}</text>
        </g>
      ))}
    </svg>
  );
}

export function GqaView({ r, b, head, width }: ViewProps) {
  const t = headTensors(r, b);
  const { H, T, dK, dV } = t;
  const options = divisorsOf(H);
  const [chosen, setChosen] = useState(options[Math.min(1, options.length - 1)]);
  const Hkv = options.includes(chosen) ? chosen : H;
  const kv = pooledKv(t, Hkv);
  const answer = useEngine(JSON.stringify([runKey(r), b, Hkv]), (engine) =>
    engine.attention({ q: t.q, k: kv.k, v: kv.v, shape: [H, T, dK], kvShape: [Hkv, T, dK], dv: dV, scale: t.scale, mask: 'causal', trace: true }),
  );
  const a = fitting(answer.value, (v) => v.trace?.weights, [H, T, T]);
  const labels = indexLabels(t.tokens);
  const prob = colorScale('prob', 1);
  const mini = width < 520 ? width : Math.max(150, Math.min(320, Math.floor(width / Math.min(4, H)) - 14));
  const bytes = kvCacheBytes({ kvHeads: Hkv, dK, dV, tokens: T });
  const mha = kvCacheBytes({ kvHeads: H, dK, dV, tokens: T });
  const given = (kv.k.length + kv.v.length) * 4; // what the engine was handed as the cache
  const name = Hkv === H ? 'multi-head (MHA)' : Hkv === 1 ? 'multi-query (MQA)' : `grouped-query (GQA), groups of ${H / Hkv}`;
  return (
    <div class="modern" data-modern="gqa" data-engine={readiness(answer)}>
      <ClipNote t={t} />
      <p class="explain">
        Llama 2 70B, Llama 3, Mistral and Qwen keep fewer key/value heads than query heads: several query heads read
        the same keys and values, so the KV cache that generation keeps per token shrinks by that factor. Here the
        page averages each group’s keys and values (the GQA paper’s way of turning a multi-head model into a grouped
        one) and the engine runs causal attention with kvShape = [Hkv, T, d_k]; query head h reads kv head ⌊h / (H/Hkv)⌋.
      </p>
      <div class="modern-controls">
        <Pick id="gqa-kv" label="key/value heads" value={Hkv} set={setChosen}
          options={options.map((n) => ({ value: n, text: `${n}${n === H ? ' (MHA)' : n === 1 ? ' (MQA)' : ' (GQA)'}` }))} />
        <span>{`${H} query heads: ${name}`}</span>
      </div>
      <Sharing H={H} Hkv={Hkv} head={head} />
      <div class="modern-table" tabIndex={0} role="region" aria-label="KV cache memory"><table class="kv-memory" id="gqa-memory">
        <caption>{`KV cache of this layer in float32 (K and V: Hkv × (d_k + d_v) × 4 bytes per token), T = ${T}`}</caption>
        <thead><tr><td /><th scope="col">per token</th><th scope="col">{`for ${T} tokens`}</th></tr></thead>
        <tbody>
          <tr><th scope="row">{`MHA, ${H} kv heads`}</th><td data-bytes={mha.perToken}>{`${mha.perToken.toLocaleString('en')} B`}</td><td data-bytes={mha.total}>{`${mha.total.toLocaleString('en')} B`}</td></tr>
          <tr><th scope="row">{`this, ${Hkv} kv head${Hkv > 1 ? 's' : ''}`}</th><td data-bytes={bytes.perToken}>{`${bytes.perToken.toLocaleString('en')} B`}</td><td data-bytes={bytes.total} data-given={given}>{`${bytes.total.toLocaleString('en')} B`}</td></tr>
          <tr><th scope="row">saved</th><td data-saved={mha.perToken - bytes.perToken}>{`${(mha.perToken - bytes.perToken).toLocaleString('en')} B`}</td><td>{`${(mha.total - bytes.total).toLocaleString('en')} B (${fmt(100 * (1 - Hkv / H), 3)} %)`}</td></tr>
        </tbody>
      </table></div>
      <p class="note">{`The k and v arrays handed to the engine hold ${given.toLocaleString('en')} bytes. At scale: Llama 2 70B (80 layers, 8 kv heads of 64, d = 128, 16-bit) keeps 327,680 bytes per token instead of 2,621,440 with one kv head per query head.`}</p>
      {answer.error && <p class="error-text">{`The engine rejected this: ${answer.error}`}</p>}
      {a && (
        <div class="grid">
          {Array.from({ length: H }, (_, h) => {
            const g = Math.floor(h / (H / Hkv));
            const w = a.trace!.weights.data.subarray(h * T * T, (h + 1) * T * T);
            const masked = a.trace!.masked.data.subarray(h * T * T, (h + 1) * T * T);
            return (
              <figure class={`matrix mini${h === head ? ' current' : ''}`} data-head={h}>
                <figcaption><span class="group-dot" style={{ background: kGroupColors[g % 8] }} />{`query head ${h + 1} · kv head ${g + 1}`}</figcaption>
                <CellGrid id={`gqa-${h}`} label={`Weights of query head ${h + 1}, which reads kv head ${g + 1}`} rows={T} cols={T}
                  rowLabels={labels} colLabels={labels} width={mini}
                  cell={(i, j) => (masked[i * T + j] === -Infinity ? { fill: null } : { fill: prob(w[i * T + j]), text: `${labels[i]} → ${labels[j]}: ${full(w[i * T + j])}` })} />
              </figure>
            );
          })}
        </div>
      )}
    </div>
  );
}
