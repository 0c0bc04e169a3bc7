// The ceiling the facade is measured against: a bare Fastify route that answers GET /service
// with a fixed page (the JSON file given), serialised per request, no auth, no filtering.
// Prints `READY <url>`; stops on SIGTERM.
import { readFile } from 'node:fs/promises';
import Fastify from 'fastify';

const [pageFile] = process.argv.slice(2);
if (pageFile === undefined) throw new Error('usage: bare-server.ts PAGE_JSON');
const page = JSON.parse(await readFile(pageFile, 'utf8')) as unknown;
const app = Fastify({ logger: false });
app.get('/service', async () => page);
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`READY ${url}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
