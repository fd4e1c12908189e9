// Writes a Brotli (.br, quality 11) and a gzip (.gz, level 9) copy beside every text and wasm file
// of dist/, for static hosts that serve precompressed files (nginx gzip_static/brotli_static,
// Caddy's precompressed, Netlify and Cloudflare do it themselves). Node's own zlib: no package.
//
//   node scripts/precompress.mjs [dir]   (default dist/; scripts/build-site.sh runs it)

import { readdir, readFile, writeFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.wasm', '.svg', '.txt', '.webmanifest', '.json']);

async function* files(d) {
  for (const name of await readdir(d)) {
    const p = path.join(d, name);
    if ((await stat(p)).isDirectory()) yield* files(p);
    else yield p;
  }
}

let count = 0;
for await (const file of files(dir)) {
  if (!COMPRESSIBLE.has(path.extname(file))) continue;
  const body = await readFile(file);
  const br = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  const gz = gzipSync(body, { level: 9 });
  // a compressed copy no smaller than the file is not worth a host's choosing it
  if (br.length < body.length) await writeFile(`${file}.br`, br);
  if (gz.length < body.length) await writeFile(`${file}.gz`, gz);
  count++;
}
console.log(`precompress: ${count} files in ${path.relative(root, dir) || dir} (.br, .gz)`);
