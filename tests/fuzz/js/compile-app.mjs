// Transpiles the site's DOM-free parsing modules (web/app/src) to plain ES
// modules under build/fuzz/app-js so Node can test them directly.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const kModules = ['state', 'url-state', 'weights-import', 'model', 'prng', 'tokenize', 'tensor'];

export async function loadAppModules() {
  const out = join(repo, 'build/fuzz/app-js');
  mkdirSync(out, { recursive: true });
  for (const name of kModules) {
    const source = readFileSync(join(repo, 'web/app/src', `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    });
    // Relative imports need their extension in Node's ESM resolver.
    writeFileSync(
      join(out, `${name}.js`),
      outputText.replace(/from '(\.\/[\w-]+)'/g, "from '$1.js'"),
    );
  }
  const load = (name) => import(pathToFileURL(join(out, `${name}.js`)).href);
  return {
    state: await load('state'),
    urlState: await load('url-state'),
    weightsImport: await load('weights-import'),
    model: await load('model'),
    tokenize: await load('tokenize'),
  };
}
