// model.forward({ reusePrefix: true }): a page re-running its model after
// each edit of the text. Under causal attention the rows of the tokens before
// the first changed one do not change, so the core keeps their keys and
// values (the registry's prefix cache, cpp/bindings/models.cpp gpt2_extend)
// and runs only the tokens from the edit on; here the result is put back
// together from the previous call's rows and the new ones, in the shapes a
// whole forward returns.
import type { CallOutputs, CallTensor } from './call.js';
import { layerList } from './model-forward-options.js';
import type { ModelConfig, ModelForwardResult } from './model-types.js';
import type { TensorOut } from './types.js';

/** Which rows a reusePrefix run returns. */
export interface PrefixRows {
  trace: boolean;
  /** 'last': the result holds the last row of logits only. */
  logits: 'all' | 'last';
  /**
   * With trace: whether the last entry of `hidden` (the final LayerNorm's rows) is
   * there; the core computes it only when asked (lastBlockEveryRow).
   */
  finalRows: boolean;
}

/** What the last reusePrefix call returned, to take its unchanged rows from. */
export interface PrefixRun extends PrefixRows {
  tokens: number[];
  /** Its rows, the package's own: the next run writes its new rows into them. */
  kept: ModelForwardResult;
}

/** How many leading tokens `tokens` shares with the last run (0 when it cannot reuse its rows). */
export function sharedPrefix(last: PrefixRun | null, tokens: number[], run: PrefixRows): number {
  // A run that kept fewer rows than this one needs cannot give the rows before the edit.
  if (
    !last ||
    (run.trace && !last.trace) ||
    (run.logits === 'all' && last.logits === 'last') ||
    (run.finalRows && !last.finalRows)
  )
    return 0;
  let n = 0;
  const end = Math.min(last.tokens.length, tokens.length);
  while (n < end && last.tokens[n] === tokens[n]) n++;
  return n;
}

/**
 * Rows [0, first) of `old` ((rows, width) each) then the rows of `fresh`:
 * written into `old` itself when the row count is unchanged (an edit), so
 * the kept rows need no new buffer, else into a new array.
 */
function stackRows(old: Float32Array, fresh: Float32Array, first: number, width: number) {
  const out =
    old.length === first * width + fresh.length
      ? old
      : new Float32Array(first * width + fresh.length);
  if (out !== old) out.set(old.subarray(0, first * width));
  out.set(fresh, first * width);
  return out;
}

/**
 * Attention (H, T, T) from the last run's (H, T0, T0), whose rows before
 * `first` hold (under causal attention, keys 0..row only), and the new rows
 * (H, T − first, T); in place when T0 = T, as stackRows.
 */
function stackAttention(old: TensorOut | undefined, fresh: TensorOut, first: number, T: number) {
  const H = fresh.shape[0]!;
  const T0 = old?.shape[1] ?? 0;
  const inPlace = T0 === T;
  const out = inPlace ? old!.data : new Float32Array(H * T * T);
  for (let h = 0; h < H; h++) {
    for (let i = 0; !inPlace && i < first; i++) {
      out.set(old!.data.subarray((h * T0 + i) * T0, (h * T0 + i) * T0 + i + 1), (h * T + i) * T);
    }
    out.set(
      fresh.data.subarray(h * (T - first) * T, (h + 1) * (T - first) * T),
      (h * T + first) * T,
    );
  }
  return { data: out, shape: [H, T, T] };
}

/**
 * The whole forward's rows, from the last run's kept rows (`last.kept`,
 * changed in place where the shapes allow) and the core's rows from `first`
 * on (logits: 'last', its one row; views of wasm memory, read once): the
 * arrays to keep for the next run.
 */
export function assemble(
  last: PrefixRun | null,
  out: CallOutputs,
  first: number,
  T: number,
  config: ModelConfig,
  { trace, logits: logitRows, finalRows }: PrefixRows,
): ModelForwardResult {
  const { vocabSize: V, dModel: C } = config;
  const logits = out.logits as CallTensor;
  const kept = last?.kept;
  const result: ModelForwardResult = {
    logits:
      logitRows === 'last'
        ? { data: logits.data.slice(), shape: logits.shape } // the core's one row is the whole answer
        : {
            data: stackRows(kept?.logits.data ?? new Float32Array(0), logits.data, first, V),
            shape: [T, V],
          },
  };
  if (trace) {
    const attentions = layerList(out.attentions as CallOutputs);
    const hidden = layerList(out.hidden as CallOutputs);
    result.attentions = attentions.map((a, l) =>
      stackAttention(kept?.attentions?.[l], a, first, T),
    );
    // Without finalRows the core's last entry is the last token's row alone: it and
    // the kept one are left out (a hole), and a later run that wants them runs whole.
    result.hidden = new Array<TensorOut>(hidden.length);
    hidden.forEach((h, l) => {
      if (l === config.layers && !finalRows) return;
      result.hidden![l] = {
        data: stackRows(kept?.hidden?.[l]?.data ?? new Float32Array(0), h.data, first, C),
        shape: [T, C],
      };
    });
  }
  return result;
}

/**
 * A copy of a result's arrays: the caller's, as it may transfer or change
 * them; of `hidden`, the wanted entries only (null: all), the others holes.
 */
export function copyResult(
  r: ModelForwardResult,
  wantedHidden: boolean[] | null,
): ModelForwardResult {
  const copy = (t: TensorOut) => ({ data: t.data.slice(), shape: [...t.shape] });
  const hidden = r.hidden && new Array<TensorOut>(r.hidden.length);
  r.hidden?.forEach((t, l) => {
    if (!wantedHidden || wantedHidden[l]) hidden![l] = copy(t);
  });
  return {
    logits: copy(r.logits),
    ...(r.attentions && { attentions: r.attentions.map(copy) }),
    ...(hidden && { hidden }),
  };
}
