// The trained model as the page's model: its saved bytes, with the task's vocabulary in
// the file's metadata, go through the same path as a GPT-2 file the visitor chooses (the
// GPT-2 worker loads them), and the page's text becomes the probe sequence, so every
// view, the inspector and the model view show what the model learned. Also the download.
import { download } from '../export';
import { loadGpt2 } from '../gpt2/client';
import { loadedGpt2, selectLayer } from '../gpt2/state';
import { setInputs } from '../store';
import { savedModel } from './client';
import { handedHeads, latest } from './state';
import { withVocabulary } from './model-file';
import type { Task } from './tasks';

async function trainedFile(task: Task): Promise<File> {
  const bytes = withVocabulary(await savedModel(), task.vocabulary);
  return new File([bytes], `attnscope-${task.id}.safetensors`, {
    type: 'application/octet-stream',
  });
}

/** Makes the trained model the page's model; resolves to what the page says about it. */
export async function showInPage(task: Task): Promise<string> {
  const file = await trainedFile(task);
  const config = await loadGpt2(file, () => undefined);
  setInputs({ model: 'gpt2' }); // a file, as far as the menu and a link can say
  selectLayer(Math.min(1, config.layers - 1));
  const loaded = {
    source: 'gpt2' as const,
    fileName: file.name,
    fileBytes: file.size,
    config,
    vocabulary: task.vocabulary,
  };
  const heads = latest.value?.heads;
  handedHeads.value = heads
    ? { loaded, heads, scoredOn: `${heads.sequences} held-out sequences of the task` }
    : null;
  loadedGpt2.value = loaded;
  const probe = task.vocabulary.decode(task.probe.tokens);
  setInputs({ text: probe });
  return `The trained model is now the page’s model: the views above show its attention on “${probe}”. Type your own ${task.vocabulary.kind === 'symbols' ? 'letters' : 'words'} in the text box to probe it.`;
}

/** Downloads the trained model as a .safetensors file. */
export async function downloadModel(task: Task): Promise<void> {
  const file = await trainedFile(task);
  download(file, file.name);
}
