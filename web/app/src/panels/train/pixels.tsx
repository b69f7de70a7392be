// A matrix drawn as one canvas pixel per cell (scaled up by CSS without smoothing).
import { useLayoutEffect, useRef } from 'preact/hooks';

export function PixelCanvas({
  rows,
  cols,
  color,
  width,
  height,
  label,
}: {
  rows: number;
  cols: number;
  /** The colour of cell (i, j). */
  color: (i: number, j: number) => readonly [number, number, number];
  width: number;
  height: number;
  label?: string;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  useLayoutEffect(() => {
    const canvas = ref.current!;
    canvas.width = cols;
    canvas.height = rows;
    const ctx = canvas.getContext('2d')!;
    const img = ctx.createImageData(cols, rows);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) img.data.set([...color(i, j), 255], 4 * (i * cols + j));
    ctx.putImageData(img, 0, 0);
  });
  return (
    <canvas
      ref={ref}
      class="pixels"
      style={{ width: `${width}px`, height: `${height}px` }}
      role={label ? 'img' : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : 'true'}
    />
  );
}
