// Every public name in the shipped declarations carries a doc comment (TSDoc),
// so editors show documentation for the whole API.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';

const kPublicDeclarations = [
  'index.d.ts',
  'types.d.ts',
  'errors.d.ts',
  'node.d.ts',
  'worker.d.ts',
  'worker-node.d.ts',
  'worker-protocol.d.ts',
  'reference.d.ts',
  'reference-gpt2.d.ts',
  'gpt2-tokenizer.d.ts',
  'bpe-tokenizer.d.ts',
  'token-text.d.ts',
  'safetensors.d.ts',
  'sampling.d.ts',
];
const dist = new URL('./', import.meta.resolve('attnscope/attnscope.wasm'));

function undocumented(file) {
  const text = readFileSync(fileURLToPath(new URL(file, dist)), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const missing = [];
  const hasDoc = (node) => ts.getJSDocCommentsAndTags(node).length > 0;
  const isExported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const visit = (node) => {
    const declaration =
      ts.isFunctionDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isVariableStatement(node);
    if (declaration && isExported(node) && !hasDoc(node)) {
      const name = node.name?.text ?? node.declarationList?.declarations[0]?.name.text;
      missing.push(`${file}: ${name}`);
    }
    if ((ts.isPropertySignature(node) || ts.isMethodSignature(node)) && !hasDoc(node)) {
      missing.push(
        `${file}: member ${node.name.getText(source)} of ${node.parent.parent?.name?.text ?? node.parent.name?.text ?? 'a type literal'}`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return missing;
}

test('every exported declaration and member in the shipped .d.ts files has a doc comment', () => {
  const missing = kPublicDeclarations.flatMap(undocumented);
  assert.deepEqual(missing, []);
});

// The Markdown docs link to each other and into the tree: every relative link
// must reach a file, and every #anchor a heading of that file.
const root = new URL('../../', import.meta.url);
const kDocs = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'tests/README.md',
  'web/bench/README.md',
  'docs/USAGE.md',
  'docs/ARCHITECTURE.md',
  'docs/performance/README.md',
  'docs/performance/journal.md',
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

function headings(file) {
  const text = readFileSync(fileURLToPath(file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1])));
}

test('relative links in the docs reach existing files and headings', () => {
  const broken = [];
  for (const doc of kDocs) {
    const url = new URL(doc, root);
    const text = readFileSync(fileURLToPath(url), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#');
      const file = path ? new URL(path, url) : url;
      if (!existsSync(file)) broken.push(`${doc}: ${target} (no such file)`);
      else if (anchor && file.pathname.endsWith('.md') && !headings(file).has(anchor))
        broken.push(`${doc}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
