// The model attnscope trained and ships (models/kjv/, its card is README.md there):
// Vite copies both files into the built site and gives their URLs.
import modelUrl from '../../../../models/kjv/model.safetensors?url';
import tokenizerUrl from '../../../../models/kjv/tokenizer.json?url';

export const kjvModelUrl = modelUrl;
export const kjvTokenizerUrl = tokenizerUrl;
export const kjvFileName = 'attnscope-kjv.safetensors';

/** The shipped model's file, fetched as a File for the worker to read like a chosen one. */
export async function fetchKjvModel(): Promise<File> {
  const response = await fetch(kjvModelUrl);
  if (!response.ok) throw new Error(`the model could not be fetched (HTTP ${response.status})`);
  return new File([await response.blob()], kjvFileName);
}
