// The model picker: the seeded toy (random weights, said plainly), the model attnscope
// trained on the King James Bible and ships with the site (what the page opens on), or the
// visitor's own GPT-2 from a .safetensors file read in the browser, with progress while it
// reads and loads, and the engine's message when the file is refused (the text is never
// touched). The choice is part of the page's state (a link names it); followModelChoice
// loads or unloads the model it names.
import { computed, effect, signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { loadGpt2, startGpt2, unloadGpt2, type LoadProgress } from '../gpt2/client';
import {
  loadedGpt2,
  loadingGpt2,
  selectLayer,
  waitingForKjv,
  type LoadedGpt2,
} from '../gpt2/state';
import { fetchKjvModel } from '../gpt2/kjv';
import { loadTokenizer, useTokenizer } from '../gpt2/tokens';
import { inputs, setInputs } from '../store';
import type { ModelChoice } from '../state';
import { vocabularyOfFile } from '../train/model-file';

const choice = computed<ModelChoice>(() => inputs.value.model);
const progress = signal<LoadProgress | null>(null);
const failure = signal<string | null>(null);

const kMB = 1e6;
const megabytes = (n: number) =>
  `${(n / kMB).toLocaleString('en', { maximumFractionDigits: n < 10 * kMB ? 1 : 0 })} MB`;

// The page's layout for a GPT-2-architecture model (the toy's own controls hidden), from
// the moment the KJV model is asked for, so that nothing moves when it arrives.
effect(() => {
  document.body.dataset.model = loadedGpt2.value || waitingForKjv.value ? 'gpt2' : 'toy';
});

async function openFile(file: File | Promise<File>, source: 'gpt2' | 'kjv'): Promise<void> {
  failure.value = null;
  loadingGpt2.value = source;
  progress.value = { phase: 'reading', loaded: 0, total: file instanceof File ? file.size : 0 };
  try {
    // The worker's engine compiles while the file is fetched, not after.
    const [read, tokenizer] = await Promise.all([file, loadTokenizer(source), startGpt2()]);
    const [config, vocabulary] = await Promise.all([
      loadGpt2(read, (p) => (progress.value = p)),
      vocabularyOfFile(read),
    ]);
    useTokenizer(tokenizer);
    selectLayer(0);
    loadedGpt2.value = { source, fileName: read.name, fileBytes: read.size, config, vocabulary };
  } catch (e) {
    failure.value = e instanceof Error ? e.message : String(e);
    // The menu says what the page goes on with: the model still loaded, or the toy.
    if (source === 'kjv') setInputs({ model: loadedGpt2.value ? loadedGpt2.value.source : 'toy' });
  } finally {
    progress.value = null;
    loadingGpt2.value = null;
  }
}

/**
 * Loads the model the state names whenever that choice changes (a link, the menu, a
 * tutorial example, which runs on the toy): the KJV model is fetched from the site, the
 * toy unloads any model; a GPT-2 file waits for the visitor to choose it.
 */
export function followModelChoice(): void {
  effect(() => {
    const next = choice.value;
    const loaded = loadedGpt2.peek();
    if (next === 'kjv' && loaded?.source !== 'kjv' && !loadingGpt2.peek())
      void openFile(fetchKjvModel(), 'kjv');
    if (next === 'toy' && loaded) {
      loadedGpt2.value = null;
      void unloadGpt2();
    }
  });
}

function Progress({ p }: { p: LoadProgress }) {
  // The shipped model's size is known once its fetch is answered; until then the bar only moves.
  const reading = p.phase === 'reading' && p.total > 0;
  const label = reading
    ? `Reading the file into the engine: ${megabytes(p.loaded)} of ${megabytes(p.total)}`
    : p.phase === 'reading'
      ? 'Fetching the model’s file from this site…'
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
  const choose = (next: ModelChoice) => {
    failure.value = null;
    setInputs({ model: next });
  };
  return (
    <label class="bar-field">
      Model
      <select
        id="model-source"
        value={choice.value}
        // One model loads at a time: the menu waits for it.
        disabled={progress.value !== null}
        onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value as ModelChoice)}
      >
        <option value="kjv">attnscope’s KJV model</option>
        <option value="toy">Toy (random)</option>
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

/** What the shipped model is, inside its fold. */
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

function loadedLine(g: LoadedGpt2): string {
  return `${g.fileName} (${megabytes(g.fileBytes)}): ${g.config.layers} layers × ${g.config.heads} heads, d_model ${g.config.dModel}, vocabulary ${g.config.vocabSize.toLocaleString('en')}, up to ${g.config.contextLength.toLocaleString('en')} tokens. Its patterns come from the file’s weights: a trained model’s are learned, not chance.`;
}

/**
 * One line, so that the figure stays on the first screen: what the model is, with the
 * rest (its description, the file's sizes, another file) folded under it.
 */
function About({ summary, children }: { summary: string; children: ComponentChildren }) {
  return (
    <details class="model-about" id="model-about">
      <summary>{summary}</summary>
      {children}
    </details>
  );
}

/** Under the bar once a model other than the toy is chosen: what it is, progress and the outcome. */
export function ModelSource() {
  const loaded = loadedGpt2.value;
  const source = choice.value;
  if (source === 'toy' && !failure.value) return null;
  const loadedText = loaded && (
    <p class="model-loaded" id="gpt2-loaded">
      {loadedLine(loaded)}
    </p>
  );
  return (
    <section
      class="model-picker"
      aria-label={source === 'kjv' ? 'attnscope’s KJV model' : 'Your own GPT-2'}
    >
      <div class="gpt2-source">
        {source === 'kjv' ? (
          <About summary="4 × 4 heads trained on the King James Bible">
            <KjvSource />
            {loaded?.source === 'kjv' && loadedText}
          </About>
        ) : source === 'gpt2' && loaded?.source === 'gpt2' ? (
          <About
            summary={`${loaded.fileName}: ${loaded.config.layers} layers × ${loaded.config.heads} heads`}
          >
            {loadedText}
            <details class="another-file">
              <summary>Load another file</summary>
              <FileSource />
            </details>
          </About>
        ) : source === 'gpt2' ? (
          <FileSource />
        ) : null}
        {progress.value && <Progress p={progress.value} />}
        {failure.value && (
          <p class="error" role="alert" id="gpt2-error">
            {`This file could not be loaded: ${failure.value.replace(/\.$/, '')}. Your text is kept; the page goes on with ${loaded ? loaded.fileName : 'the toy model'}.`}
          </p>
        )}
      </div>
    </section>
  );
}
