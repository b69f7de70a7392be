// The model picker: the seeded toy (random weights, said plainly), the model attnscope
// trained on the King James Bible and ships with the site, or the visitor's own GPT-2
// from a .safetensors file read in the browser, with progress while it reads and loads,
// and the engine's message when the file is refused (the text is never touched).
import { computed, effect, signal } from '@preact/signals';
import { loadGpt2, unloadGpt2, type LoadProgress } from '../gpt2/client';
import { loadedGpt2, selectLayer } from '../gpt2/state';
import { fetchKjvModel } from '../gpt2/kjv';
import { loadTokenizer, useTokenizer } from '../gpt2/tokens';
import { vocabularyOfFile } from '../train/model-file';

// The sources offered, in order.
type Source = 'toy' | 'gpt2' | 'kjv';
const chosen = signal<Source>('toy');
// What the page runs: the menu's choice, or the loaded model's source when a model
// arrived without the menu (one trained on the page is handed over as a file).
const shown = computed<Source>(() =>
  chosen.value === 'toy' && loadedGpt2.value ? loadedGpt2.value.source : chosen.value,
);
const progress = signal<LoadProgress | null>(null);
const failure = signal<string | null>(null);

const kMB = 1e6;
const megabytes = (n: number) =>
  `${(n / kMB).toLocaleString('en', { maximumFractionDigits: n < 10 * kMB ? 1 : 0 })} MB`;

effect(() => {
  document.body.dataset.model = loadedGpt2.value ? 'gpt2' : 'toy';
});

async function openFile(file: File | Promise<File>, source: 'gpt2' | 'kjv'): Promise<void> {
  failure.value = null;
  progress.value = { phase: 'reading', loaded: 0, total: file instanceof File ? file.size : 0 };
  try {
    const [read, tokenizer] = await Promise.all([file, loadTokenizer(source)]);
    const [config, vocabulary] = await Promise.all([
      loadGpt2(read, (p) => (progress.value = p)),
      vocabularyOfFile(read),
    ]);
    useTokenizer(tokenizer);
    selectLayer(0);
    loadedGpt2.value = { source, fileName: read.name, fileBytes: read.size, config, vocabulary };
  } catch (e) {
    failure.value = e instanceof Error ? e.message : String(e);
  } finally {
    progress.value = null;
  }
}

function useToy(): void {
  chosen.value = 'toy';
  failure.value = null;
  if (loadedGpt2.value) {
    loadedGpt2.value = null;
    void unloadGpt2();
  }
}

function Progress({ p }: { p: LoadProgress }) {
  const reading = p.phase === 'reading';
  const label = reading
    ? `Reading the file into the engine: ${megabytes(p.loaded)} of ${megabytes(p.total)}`
    : 'Loading the weights into the engine…';
  return (
    <p class="model-progress" role="status">
      <progress
        id="gpt2-progress"
        aria-label={label}
        max={reading ? p.total : undefined}
        value={reading ? p.loaded : undefined}
      />{' '}
      {label}
    </p>
  );
}

function FileChooser() {
  const busy = progress.value !== null;
  const pick = (files: FileList | null | undefined) => {
    const file = files?.[0];
    if (file && !busy) void openFile(file, 'gpt2');
  };
  return (
    <div
      class="drop-zone"
      onDragOver={(e) => {
        e.preventDefault();
        (e.currentTarget as HTMLElement).classList.add('over');
      }}
      onDragLeave={(e) => (e.currentTarget as HTMLElement).classList.remove('over')}
      onDrop={(e) => {
        e.preventDefault();
        (e.currentTarget as HTMLElement).classList.remove('over');
        pick(e.dataTransfer?.files);
      }}
    >
      <label>
        Choose a .safetensors file
        <input
          id="gpt2-file"
          type="file"
          accept=".safetensors"
          disabled={busy}
          onChange={(e) => {
            const input = e.currentTarget as HTMLInputElement;
            pick(input.files);
            input.value = ''; // the same file can be chosen again
          }}
        />
      </label>{' '}
      or drop it here.
    </div>
  );
}

/** The model choice, one field of the input bar. */
export function ModelPicker() {
  const source = shown.value;
  const choose = (next: Source) => {
    if (next === 'toy') return useToy();
    chosen.value = next;
    if (next === 'kjv' && loadedGpt2.value?.source !== 'kjv' && !progress.value)
      void openFile(fetchKjvModel(), 'kjv');
  };
  return (
    <label class="bar-field">
      Model
      <select
        id="model-source"
        value={source}
        onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value as Source)}
      >
        <option value="toy">Toy (random)</option>
        <option value="kjv">attnscope’s KJV model</option>
        <option value="gpt2">GPT-2 file…</option>
      </select>
    </label>
  );
}

/** The chooser and where the official files are. */
function FileSource() {
  return (
    <>
      <FileChooser />
      <p class="hint">
        The file is read here, in your browser, and never uploaded. GPT-2’s official weights are on
        Hugging Face:{' '}
        <a href="https://huggingface.co/openai-community/gpt2/tree/main" rel="noreferrer">
          openai-community/gpt2
        </a>{' '}
        (model.safetensors, 548 MB, 124 million parameters) and{' '}
        <a href="https://huggingface.co/openai-community/gpt2-medium/tree/main" rel="noreferrer">
          openai-community/gpt2-medium
        </a>{' '}
        (model.safetensors, 1.52 GB, 355 million parameters; it needs about 3 GB of memory).
      </p>
    </>
  );
}

/** What the shipped model is, under the bar once it is chosen. */
function KjvSource() {
  return (
    <p class="hint" id="kjv-about">
      A small GPT-2 (4 layers × 4 heads, 1.3 million parameters, 5.3 MB) that attnscope trained with
      its own engine on the King James Bible, with its own 4096-token vocabulary. It knows only that
      book’s English: try a verse. Its card, with what its heads do, is models/kjv/README.md in
      attnscope’s repository.
    </p>
  );
}

/** Under the bar once a GPT-2 is chosen: where it comes from, progress and the outcome. */
export function ModelSource() {
  const loaded = loadedGpt2.value;
  const source = shown.value;
  if (source === 'toy') return null;
  return (
    <section
      class="model-picker"
      aria-label={source === 'kjv' ? 'attnscope’s KJV model' : 'Your own GPT-2'}
    >
      <div class="gpt2-source">
        {source === 'kjv' ? (
          <KjvSource />
        ) : loaded?.source === 'gpt2' ? (
          <details class="another-file">
            <summary>Load another file</summary>
            <FileSource />
          </details>
        ) : (
          <FileSource />
        )}
        {progress.value && <Progress p={progress.value} />}
        {failure.value && (
          <p class="error" role="alert" id="gpt2-error">
            {`This file could not be loaded: ${failure.value.replace(/\.$/, '')}. Your text is kept; the page goes on with ${loaded ? loaded.fileName : 'the toy model'}.`}
          </p>
        )}
        {loaded && (
          <p class="model-loaded" id="gpt2-loaded">
            {`${loaded.fileName} (${megabytes(loaded.fileBytes)}): ${loaded.config.layers} layers × ${loaded.config.heads} heads, d_model ${loaded.config.dModel}, vocabulary ${loaded.config.vocabSize.toLocaleString('en')}, up to ${loaded.config.contextLength.toLocaleString('en')} tokens. Its patterns come from the file’s weights: a trained GPT-2’s are learned, not chance.`}
          </p>
        )}
      </div>
    </section>
  );
}
