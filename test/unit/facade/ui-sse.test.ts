// The status page's stream reader (ui/sse.js) run in Node, whose fetch and web streams are the
// browser's APIs: the WHATWG event-stream format (fields, multi-line data, CRLF, comments, an
// event split across chunks), the bearer token, reconnecting after `retry` with the last id in
// Last-Event-ID, and a 401 stopping it for the token form.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

interface Stream {
  stop(): void;
}
type OpenStream = (options: {
  url: string;
  token: () => string;
  onEvent: (type: string, data: string, id: string) => void;
  onState: (state: string, detail?: number) => void;
}) => Stream;

// A plain JS module of the page, not part of the TypeScript build: imported by URL.
const { openStream } = (await import(
  pathToFileURL(join(import.meta.dirname, '../../../ui/sse.js')).href
)) as { openStream: OpenStream };

let server: Server | undefined;
let stream: Stream | undefined;
afterEach(async () => {
  stream?.stop();
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

/** Serves each connection with the next handler; resolves the base URL. */
async function serve(
  handlers: ((req: IncomingMessage, write: (s: string) => void, end: () => void) => void)[],
  requests: IncomingMessage[],
): Promise<string> {
  const started = createServer((req, res) => {
    requests.push(req);
    const handler = handlers.shift();
    if (handler === undefined) {
      res.writeHead(503).end();
      return;
    }
    if (req.headers.authorization !== 'Bearer t0ken') {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    handler(
      req,
      (s) => res.write(s),
      () => res.end(),
    );
  });
  server = started;
  await new Promise<void>((done) => started.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(started.address() as AddressInfo).port}/watch`;
}

describe('ui/sse.js', () => {
  it('parses events, and resumes after the last id with Last-Event-ID', async () => {
    const requests: IncomingMessage[] = [];
    const url = await serve(
      [
        (_req, write, end) => {
          write('retry: 10\n\n: keepalive\n\nid: 7.1\nevent: ready\ndata: {}\n\n');
          // One event in three chunks, CRLF lines, data over two lines.
          write('id: 7.2\r\nevent: upsert\r\ndata: {"a":');
          write('\r\ndata: 1}\r');
          write('\n\r\n');
          end();
        },
        (_req, write) => write('id: 7.3\nevent: delete\ndata: {"b":2}\n\n'),
      ],
      requests,
    );
    const events: [string, string, string][] = [];
    const states: string[] = [];
    const done = new Promise<void>((resolve) => {
      stream = openStream({
        url,
        token: () => 't0ken',
        onEvent: (type, data, id) => {
          events.push([type, data, id]);
          if (type === 'delete') resolve();
        },
        onState: (state) => states.push(state),
      });
    });
    await done;
    expect(events).toEqual([
      ['ready', '{}', '7.1'],
      ['upsert', '{"a":\n1}', '7.2'],
      ['delete', '{"b":2}', '7.3'],
    ]);
    expect(requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '7.2']);
    expect(states).toEqual(['connecting', 'live', 'waiting', 'connecting', 'live']);
  });

  it('stops at a 401, for the page to ask for the token again', async () => {
    const requests: IncomingMessage[] = [];
    const url = await serve([() => {}], requests);
    const state = await new Promise<string>((resolve) => {
      stream = openStream({
        url,
        token: () => 'revoked',
        onEvent: () => {},
        onState: (s) => {
          if (s !== 'connecting') resolve(s);
        },
      });
    });
    expect(state).toBe('unauthenticated');
    expect(requests).toHaveLength(1);
  });
});
