// A matrix drawn as one canvas pixel per cell (scaled up by CSS without smoothing).
import { useLayoutEffect, useRef } from 'preact/hooks';
import { paintCells, type Rgb } from '../../views/paint-cells';

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
  color: (i: number, j: number) => Rgb;
  width: number;
  height: number;
  label?: string;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  useLayoutEffect(() => {
    paintCells(ref.current!, rows, cols, color);
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
