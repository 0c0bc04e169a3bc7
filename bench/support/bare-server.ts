// The ceiling the facade is measured against: bare Fastify routes that answer a fixed page (the
// JSON file given), no auth, no filtering — GET /service serialises the page per request, GET
// /service-bytes sends it already serialised (what the facade's per-item JSON approaches).
// Prints `READY <url>`; stops on SIGTERM.
import { readFile } from 'node:fs/promises';
import Fastify from 'fastify';

const [pageFile] = process.argv.slice(2);
if (pageFile === undefined) throw new Error('usage: bare-server.ts PAGE_JSON');
const page = JSON.parse(await readFile(pageFile, 'utf8')) as unknown;
const app = Fastify({ logger: false });
const bytes = Buffer.from(JSON.stringify(page));
app.get('/service', async () => page);
app.get('/service-bytes', async (_request, reply) => {
  reply.type('application/json; charset=utf-8');
  return bytes;
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`READY ${url}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
