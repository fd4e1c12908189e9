// A static file server for dist/ on 127.0.0.1 (no dependencies), which counts requests so tests
// can check that the page fetches nothing but its own files, and can be stopped and restarted
// on the same port to test offline reloads.
//
// Options: `extraRoots` serves other folders under a path prefix; `cacheControl` is the header
// for the files whose names do not change across builds (default `no-cache`: revalidated), as a
// host that lets browsers keep them (`public, max-age=600`) sends it; `maxUrl` answers a longer
// request target with 414 URI Too Long, as a host with that limit does (without it, Node's own
// 16 KB header limit answers 431).

import http from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export async function startServer(dir, { port = 0, extraRoots = {}, cacheControl = 'no-cache', maxUrl } = {}) {
  const requests = [];
  const handler = async (req, res) => {
    if (maxUrl !== undefined && req.url.length > maxUrl) {
      requests.push(`${req.url.slice(0, 64)}… (${req.url.length} characters)`);
      res.writeHead(414, { 'content-type': 'text/plain' }).end('URI too long');
      return;
    }
    const url = new URL(req.url, 'http://localhost');
    requests.push(url.pathname + url.search);
    let rel = decodeURIComponent(url.pathname);
    let base = dir;
    for (const [prefix, other] of Object.entries(extraRoots)) {
      if (rel.startsWith(prefix)) {
        base = other;
        rel = rel.slice(prefix.length - 1);
      }
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(base, path.normalize(rel));
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const s = await stat(file);
      if (!s.isFile()) throw new Error('not a file');
      // as a host that serves precompressed files does (scripts/precompress.mjs writes them):
      // Brotli if the browser takes it, else gzip, else the file itself
      const accepts = String(req.headers['accept-encoding'] ?? '');
      let body = null;
      let encoding = null;
      for (const [enc, ext] of [['br', '.br'], ['gzip', '.gz']]) {
        if (body || !new RegExp(`\\b${enc}\\b`).test(accepts)) continue;
        body = await readFile(file + ext).catch(() => null);
        if (body) encoding = enc;
      }
      body ??= await readFile(file);
      // as a good static host serves a Trunk build: hashed files forever, the rest revalidated
      const hashed = /-[0-9a-f]{16}(_bg)?\.(wasm|js|css|svg)$/.test(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': hashed ? 'public, max-age=31536000, immutable' : cacheControl,
        vary: 'accept-encoding',
        ...(encoding ? { 'content-encoding': encoding } : {}),
      });
      res.end(body);
    } catch {
      // as static hosts do: the site's 404.html, with status 404
      const page = await readFile(path.join(dir, '404.html')).catch(() => null);
      res.writeHead(404, { 'content-type': page ? TYPES['.html'] : 'text/plain' }).end(page ?? 'not found');
    }
  };
  // room for a request target past `maxUrl`, so the handler (not Node) answers it
  const options = maxUrl !== undefined ? { maxHeaderSize: Math.max(16384, maxUrl + 16384) } : {};
  let server = http.createServer(options, handler);
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const actualPort = server.address().port;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    requests,
    async close() {
      server.closeAllConnections?.();
      await new Promise((ok) => server.close(ok));
    },
    async restart() {
      server = http.createServer(options, handler);
      await new Promise((ok) => server.listen(actualPort, '127.0.0.1', ok));
    },
  };
}
