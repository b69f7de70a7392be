// Numbers: short in cells, full precision on inspection.

/** Compact form for cells and lists (about 4 significant digits). */
export function fmt(v: number, digits = 3): string {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(2).replace('-', '−');
  const s = v.toFixed(digits).replace(/\.?0+$/, '');
  return (s === '-0' ? '0' : s).replace('-', '−');
}

/** The float32 value as stored, with enough digits to identify it exactly (9 significant). */
export function full(v: number): string {
  if (!Number.isFinite(v)) return fmt(v);
  return Number(v.toPrecision(9)).toString().replace('-', '−');
}

export function vec(values: ArrayLike<number>, digits = 3, max = 16): string {
  const parts = Array.from(values as ArrayLike<number>)
    .slice(0, max)
    .map((v) => fmt(v, digits));
  return `[${parts.join(', ')}${values.length > max ? ', …' : ''}]`;
}
