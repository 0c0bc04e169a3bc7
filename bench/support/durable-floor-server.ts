// What this machine allows a durable Node API server at all, the yardstick bench/local-api
// prints beside the control plane's figures: HTTPS with a bearer token, each POST/PATCH body
// parsed, stamped and committed by group commit (one write + fdatasync per group, as the store
// does) before its answer, and PATCHes streamed to watchers of their collection. No API logic:
// no schema, managed fields, selectors or index. Prints `READY <url> <token> <base64 CA>`;
// stops on SIGTERM.
import { randomBytes, randomUUID } from 'node:crypto';
import { fdatasync, openSync, write } from 'node:fs';
import type { ServerResponse } from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { issueTls } from '../../src/local/tls.js';

const [dataDir] = process.argv.slice(2);
if (dataDir === undefined) throw new Error('usage: durable-floor-server.ts DATA_DIR');
const fd = openSync(join(dataDir, 'log'), 'a');
const token = randomBytes(16).toString('hex');
const tls = issueTls(['127.0.0.1']);

type Done = () => void;
let queued: Buffer[] = [];
let waiting: Done[] = [];
let writing = false;
let revision = 0;

function drain(): void {
  if (writing || queued.length === 0) return;
  const data = Buffer.concat(queued);
  const group = waiting;
  queued = [];
  waiting = [];
  writing = true;
  write(fd, data, (error) => {
    if (error) throw error;
    fdatasync(fd, (syncError) => {
      if (syncError) throw syncError;
      writing = false;
      for (const done of group) done();
      drain();
    });
  });
}

function commit(object: Record<string, unknown>, done: Done): string {
  const json = JSON.stringify(object);
  queued.push(Buffer.from(`${json}\n`));
  waiting.push(done);
  queueMicrotask(drain);
  return json;
}

const objects = new Map<string, Record<string, unknown>>();
const watchers = new Map<string, Set<ServerResponse>>();
const collectionOf = (path: string) => path.slice(0, path.lastIndexOf('/'));

const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
  if (req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401).end();
    return;
  }
  const url = new URL(req.url ?? '/', 'https://localhost');
  if (req.method === 'GET' && url.searchParams.get('watch') === 'true') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    let set = watchers.get(url.pathname);
    if (set === undefined) {
      set = new Set();
      watchers.set(url.pathname, set);
    }
    set.add(res);
    res.on('close', () => set.delete(res));
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => {
    const input = JSON.parse(body) as { metadata?: Record<string, unknown> };
    const patch = req.method === 'PATCH';
    const path = patch ? url.pathname : `${url.pathname}/${String(input.metadata?.name)}`;
    const previous = patch ? objects.get(path) : undefined;
    const object: Record<string, unknown> = {
      ...previous,
      ...input,
      metadata: {
        ...(previous?.metadata as Record<string, unknown> | undefined),
        ...input.metadata,
        ...(patch ? {} : { uid: randomUUID(), creationTimestamp: new Date().toISOString() }),
        resourceVersion: String(++revision),
      },
    };
    objects.set(path, object);
    const json = commit(object, () => {
      res.writeHead(patch ? 200 : 201, { 'content-type': 'application/json' });
      res.end(json);
      if (!patch) return;
      const line = `{"type":"MODIFIED","object":${json}}\n`;
      for (const watcher of watchers.get(collectionOf(path)) ?? []) watcher.write(line);
    });
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(
    `READY https://127.0.0.1:${port} ${token} ${Buffer.from(tls.ca).toString('base64')}\n`,
  );
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
