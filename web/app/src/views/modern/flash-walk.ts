// The fast path's online softmax, replayed in the page as an illustration: the score
// matrix in tiles of B × B, visited row block by row block; per query row a running
// max m and sum l, rescaled by exp(m_old − m_new) whenever a tile raises the max. A
// tile whose every cell the mask hides is skipped, as the kernel skips it. The scores
// read are the engine's (trace.masked); at the end exp(s − (m + ln l)) gives the weights.

export interface RowUpdate {
  row: number;
  mBefore: number;
  mAfter: number;
  factor: number; // exp(mBefore − mAfter): what the old sum (and output) is multiplied by
  lAfter: number;
}

export interface TileStep {
  ti: number; // tile row (query block)
  tj: number; // tile column (key block)
  skipped: boolean;
  rows: RowUpdate[]; // empty when skipped
}

export interface FlashWalk {
  tile: number;
  tiles: number; // per side
  steps: TileStep[];
  m: Float64Array[]; // m after each step, per row (index: step)
  l: Float64Array[];
}

/** scores: (T, T) row-major, −Infinity where masked. */
export function flashWalk(scores: ArrayLike<number>, T: number, tile: number): FlashWalk {
  const tiles = Math.ceil(T / tile);
  const m = new Float64Array(T).fill(-Infinity);
  const l = new Float64Array(T);
  const steps: TileStep[] = [];
  const ms: Float64Array[] = [];
  const ls: Float64Array[] = [];
  for (let ti = 0; ti < tiles; ti++)
    for (let tj = 0; tj < tiles; tj++) {
      const i1 = Math.min(T, (ti + 1) * tile);
      const j1 = Math.min(T, (tj + 1) * tile);
      let any = false;
      for (let i = ti * tile; i < i1 && !any; i++)
        for (let j = tj * tile; j < j1; j++) if (scores[i * T + j] > -Infinity) any = true;
      const rows: RowUpdate[] = [];
      if (any)
        for (let i = ti * tile; i < i1; i++) {
          let tileMax = -Infinity;
          for (let j = tj * tile; j < j1; j++) tileMax = Math.max(tileMax, scores[i * T + j]);
          const mBefore = m[i];
          const mAfter = Math.max(mBefore, tileMax);
          if (mAfter === -Infinity) {
            rows.push({ row: i, mBefore, mAfter, factor: 1, lAfter: l[i] });
            continue;
          }
          const factor = mBefore === -Infinity ? 0 : Math.exp(mBefore - mAfter);
          let sum = l[i] * factor;
          for (let j = tj * tile; j < j1; j++) {
            const s = scores[i * T + j];
            if (s > -Infinity) sum += Math.exp(s - mAfter);
          }
          m[i] = mAfter;
          l[i] = sum;
          rows.push({ row: i, mBefore, mAfter, factor, lAfter: sum });
        }
      steps.push({ ti, tj, skipped: !any, rows });
      ms.push(m.slice());
      ls.push(l.slice());
    }
  return { tile, tiles, steps, m: ms, l: ls };
}

/** The weights recovered from the final m and l: exp(s − (m + ln l)); 0 where masked. */
export function recoveredWeights(
  scores: ArrayLike<number>,
  T: number,
  walk: FlashWalk,
): Float64Array {
  const last = walk.steps.length - 1;
  const m = walk.m[last];
  const l = walk.l[last];
  const w = new Float64Array(T * T);
  for (let i = 0; i < T; i++) {
    const lse = m[i] + Math.log(l[i]);
    for (let j = 0; j < T; j++) {
      const s = scores[i * T + j];
      w[i * T + j] = s > -Infinity && l[i] > 0 ? Math.exp(s - lse) : 0;
    }
  }
  return w;
}
