// The modern views' own controls: labelled native inputs (keyboard and screen
// readers get them for free). Their settings are local to the view, not model inputs.

export function NumberField(p: {
  id: string;
  label: string;
  min: number;
  max: number;
  value: number;
  set: (v: number) => void;
  disabled?: boolean;
}) {
  return (
    <label for={p.id}>
      {p.label}{' '}
      <input
        id={p.id}
        type="number"
        min={p.min}
        max={p.max}
        step={1}
        value={String(p.value)}
        disabled={p.disabled}
        onChange={(e) => {
          const n = Math.round(Number((e.currentTarget as HTMLInputElement).value));
          if (Number.isFinite(n)) p.set(Math.max(p.min, Math.min(p.max, n)));
        }}
      />
    </label>
  );
}

export function Toggle(p: { id: string; label: string; value: boolean; set: (v: boolean) => void }) {
  return (
    <label for={p.id}>
      <input
        id={p.id}
        type="checkbox"
        checked={p.value}
        onChange={(e) => p.set((e.currentTarget as HTMLInputElement).checked)}
      />{' '}
      {p.label}
    </label>
  );
}

export function Pick(p: {
  id: string;
  label: string;
  options: { value: number; text: string }[];
  value: number;
  set: (v: number) => void;
}) {
  return (
    <label for={p.id}>
      {p.label}{' '}
      <select
        id={p.id}
        value={String(p.value)}
        onChange={(e) => p.set(Number((e.currentTarget as HTMLSelectElement).value))}
      >
        {p.options.map((o) => (
          <option value={String(o.value)}>{o.text}</option>
        ))}
      </select>
    </label>
  );
}

export function Slider(p: {
  id: string;
  label: string;
  min: number;
  max: number;
  value: number;
  set: (v: number) => void;
}) {
  return (
    <label for={p.id}>
      {p.label}{' '}
      <input
        id={p.id}
        type="range"
        min={p.min}
        max={p.max}
        step={1}
        value={String(p.value)}
        onInput={(e) => p.set(Number((e.currentTarget as HTMLInputElement).value))}
      />{' '}
      <output for={p.id}>{p.value}</output>
    </label>
  );
}
