// The one-change mutants of a JavaScript file of the SDK, for testbed mutate --client js: the
// usual operators at the level of the language, found by TypeScript's own parser (no regular
// expressions over the text). Prints one JSON line per mutant:
//   {id, line, op, before, after, start, end, text, stillborn}
// where [start, end) of the file's UTF-8 bytes is replaced by `text`, `before` is the mutated line as
// written and `after` as mutated ("" where the change drops the line's statement whole).
//   node mutants.mjs FILE [SKIP,...]
// SKIP names classes, functions and methods whose bodies are left alone (code no property
// drives through the port interface: the memory backend, for instance).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/js/package.json', import.meta.url));
const ts = require('typescript');

const [file, skipList = ''] = process.argv.slice(2);
const skip = new Set(skipList.split(',').filter(Boolean));
const text = readFileSync(file, 'utf8');
const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
const K = ts.SyntaxKind;

// Binary operators and what each becomes.
const swaps = new Map([
  [K.LessThanToken, ['<=']], [K.LessThanEqualsToken, ['<']],
  [K.GreaterThanToken, ['>=']], [K.GreaterThanEqualsToken, ['>']],
  [K.EqualsEqualsEqualsToken, ['!==']], [K.ExclamationEqualsEqualsToken, ['===']],
  [K.EqualsEqualsToken, ['!=']], [K.ExclamationEqualsToken, ['==']],
  [K.PlusToken, ['-']], [K.MinusToken, ['+']], [K.AsteriskToken, ['/']], [K.SlashToken, ['*']],
  [K.AmpersandAmpersandToken, ['||']], [K.BarBarToken, ['&&']],
  [K.QuestionQuestionToken, ['||']],
]);
const kindOf = (kind) => {
  if ([K.LessThanToken, K.LessThanEqualsToken, K.GreaterThanToken, K.GreaterThanEqualsToken,
       K.EqualsEqualsEqualsToken, K.ExclamationEqualsEqualsToken, K.EqualsEqualsToken,
       K.ExclamationEqualsToken].includes(kind)) return 'relational';
  if ([K.PlusToken, K.MinusToken, K.AsteriskToken, K.SlashToken].includes(kind)) return 'arithmetic';
  return 'logical';
};

const mutants = [];
function add(op, start, end, replacement) {
  const { line } = source.getLineAndCharacterOfPosition(start);
  const lineStart = source.getPositionOfLineAndCharacter(line, 0);
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  const before = text.slice(lineStart, lineEnd);
  // The mutated line (when the change stays within it), else "" (a statement dropped).
  const after = end <= lineEnd
    ? text.slice(lineStart, start) + replacement + text.slice(end, lineEnd)
    : '';
  const k = mutants.filter((m) => m.line === line + 1).length + 1;
  mutants.push({ id: `${line + 1}.${k}`, line: line + 1, op, before,
                 after: after.trim() === '' ? '' : after, start, end, text: replacement });
}

function nameOf(node) {
  return node.name && ts.isIdentifier(node.name) ? node.name.text : null;
}

function visit(node) {
  if ((ts.isClassDeclaration(node) || ts.isFunctionDeclaration(node) ||
       ts.isMethodDeclaration(node)) && skip.has(nameOf(node))) return;
  if (ts.isBinaryExpression(node) && swaps.has(node.operatorToken.kind)) {
    for (const to of swaps.get(node.operatorToken.kind))
      add(kindOf(node.operatorToken.kind), node.operatorToken.getStart(source),
          node.operatorToken.getEnd(), to);
  } else if (ts.isNumericLiteral(node)) {
    const n = Number(node.text);
    add('constant', node.getStart(source), node.getEnd(), String(n === 0 ? 1 : n === 1 ? 0 : n + 1));
  } else if (ts.isPrefixUnaryExpression(node) && node.operator === K.ExclamationToken) {
    add('logical', node.getStart(source), node.operand.getStart(source), '');
  } else if (ts.isAwaitExpression(node)) {
    add('await', node.getStart(source), node.expression.getStart(source), '');
  }
  if ((ts.isExpressionStatement(node) || ts.isThrowStatement(node)) && ts.isBlock(node.parent)) {
    add('statement', node.getStart(source), node.getEnd(), '');
  }
  ts.forEachChild(node, visit);
}
visit(source);
// A mutant the parser refuses is stillborn (the caller leaves it out of the counts).
for (const m of mutants) {
  const mutated = text.slice(0, m.start) + m.text + text.slice(m.end);
  const parsed = ts.createSourceFile(file, mutated, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS);
  m.stillborn = parsed.parseDiagnostics.length > 0;
  // [start, end) in bytes of the file's UTF-8, as the testbed splices it (the parser counts
  // UTF-16 code units, and handle.js has arrows and section signs in its comments).
  const bytes = (at) => Buffer.byteLength(text.slice(0, at), 'utf8');
  process.stdout.write(`${JSON.stringify({ ...m, start: bytes(m.start), end: bytes(m.end) })}\n`);
}
