// A module hook (node:module register): the seed's runtime/handle.js imports node:crypto for
// randomInt and randomUUID; in the judge that import gets tests/js/handles/crypto.mjs. Every
// other importer, and every other module, resolves as Node resolves it.
const crypto = new URL('./crypto.mjs', import.meta.url).href;
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'node:crypto' && context.parentURL?.endsWith('/runtime/handle.js'))
    return { url: crypto, shortCircuit: true };
  return nextResolve(specifier, context);
}
