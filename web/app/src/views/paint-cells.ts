// A matrix painted into a canvas, one pixel per cell: the canvas is sized to the
// matrix and CSS scales it up without smoothing (image-rendering: pixelated).

export type Rgb = readonly [number, number, number];

export function paintCells(
  canvas: HTMLCanvasElement,
  rows: number,
  cols: number,
  color: (i: number, j: number) => Rgb,
): void {
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(cols, rows);
  const px = img.data;
  for (let i = 0, o = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++, o += 4) {
      const [r, g, b] = color(i, j);
      px[o] = r;
      px[o + 1] = g;
      px[o + 2] = b;
      px[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}
