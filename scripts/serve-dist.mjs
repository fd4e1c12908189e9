// Serves dist/ on 127.0.0.1 (the same server the browser tests use).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../tests/e2e/lib/server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const port = Number(process.argv[2] ?? 8080);
const server = await startServer(path.join(root, 'dist'), { port });
console.log(`vramfit: serving dist/ at ${server.url}/  (Ctrl-C to stop)`);
