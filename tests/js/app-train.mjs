// The site's DOM-free training modules (web/app/src/train/tasks.ts, head-scores.ts and what
// they import) and the next token's probabilities (gpt2/probabilities.ts), transpiled with TypeScript to plain ES modules under build/app-train-js so
// that Node can test them directly.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../..');
const kModules = [
  'prng',
  'train/tasks',
  'train/vocabulary',
  'train/head-scores',
  'gpt2/named-heads',
  'gpt2/probabilities',
];

/** The training modules of the site, each as Node imports it. */
export async function loadTrainModules() {
  const out = join(repo, 'build/app-train-js');
  for (const name of kModules) {
    const source = readFileSync(join(repo, 'web/app/src', `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ES2022,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: false,
      },
    });
    // Relative imports need their extension in Node's ESM resolver; JSON (the KJV card)
    // is read from where the source expects it.
    const here = join(repo, 'web/app/src', dirname(name));
    const js = outputText
      .replace(
        /from '([^']+\.json)'/g,
        (_, path) => `from '${pathToFileURL(join(here, path)).href}' with { type: 'json' }`,
      )
      .replace(/from '(\.\.?\/[\w./-]+)'/g, "from '$1.js'");
    mkdirSync(dirname(join(out, `${name}.js`)), { recursive: true });
    writeFileSync(join(out, `${name}.js`), js);
  }
  const load = (name) => import(pathToFileURL(join(out, `${name}.js`)).href);
  return {
    tasks: await load('train/tasks'),
    headScores: await load('train/head-scores'),
    namedHeads: await load('gpt2/named-heads'),
    probabilities: await load('gpt2/probabilities'),
  };
}
