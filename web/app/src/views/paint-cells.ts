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

// One ImageData per size, reused: a page of thumbnails paints many canvases of one size,
// and a new ImageData per canvas is fresh memory each time (putImageData copies it out).
const scratch = new Map<string, { image: ImageData; words: Uint32Array }>();

/**
 * paintCells for a matrix whose colours are RGBA words already (as `packRgb` makes them):
 * no array per cell, the canvas resized only when its size changes.
 */
export function paintWords(
  canvas: HTMLCanvasElement,
  rows: number,
  cols: number,
  word: (i: number, j: number) => number,
): void {
  if (canvas.width !== cols) canvas.width = cols;
  if (canvas.height !== rows) canvas.height = rows;
  const key = `${cols}x${rows}`;
  let s = scratch.get(key);
  if (!s) {
    if (scratch.size >= 8) scratch.clear();
    const image = new ImageData(cols, rows);
    scratch.set(key, (s = { image, words: new Uint32Array(image.data.buffer) }));
  }
  const words = s.words;
  for (let i = 0, o = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++, o++) words[o] = word(i, j);
  }
  canvas.getContext('2d')!.putImageData(s.image, 0, 0);
}

/** [r, g, b] as one opaque RGBA word in the platform's byte order (ImageData's layout). */
export function packRgb([r, g, b]: Rgb): number {
  const word = new Uint32Array(1);
  new Uint8Array(word.buffer).set([r, g, b, 255]);
  return word[0]!;
}
