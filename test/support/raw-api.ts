// Raw HTTPS requests to a local control plane, as its own admin: one call with the answer's
// status, headers and JSON, and a watch read until enough events came. For tests of the API
// machinery itself, where a client library would hide what is on the wire.
import type { ControlPlane } from '../../src/local/index.js';
import { type Fetch, fetchTrusting } from './https.js';

export interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, any>;
}

export type WatchEvent = { type: string; object: Record<string, any> };

export interface RawApi {
  readonly fetch: Fetch;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** Reads a watch stream until `count` events arrived, it closed, or `timeoutMs` passed. */
  watchEvents(path: string, count: number, timeoutMs?: number): Promise<WatchEvent[]>;
}

export function rawApi(plane: Pick<ControlPlane, 'url' | 'token' | 'ca'>): RawApi {
  const fetch = fetchTrusting(plane.ca);
  return {
    fetch,
    async call(method, path, body, headers = {}) {
      const response = await fetch(`${plane.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${plane.token}`,
          'Content-Type': 'application/json',
          ...headers,
        },
        ...(body !== undefined
          ? { body: typeof body === 'string' ? body : JSON.stringify(body) }
          : {}),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        json: text ? JSON.parse(text) : {},
      };
    },
    async watchEvents(path, count, timeoutMs = 10_000) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      const response = await fetch(`${plane.url}${path}`, {
        headers: { Authorization: `Bearer ${plane.token}` },
        signal: controller.signal,
      });
      const events: WatchEvent[] = [];
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += Buffer.from(chunk).toString();
          let newline = buffer.indexOf('\n');
          while (newline >= 0) {
            events.push(JSON.parse(buffer.slice(0, newline)));
            buffer = buffer.slice(newline + 1);
            newline = buffer.indexOf('\n');
          }
          if (events.length >= count) break;
        }
      } catch (error) {
        if ((error as Error).name !== 'AbortError') throw error;
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
      return events;
    },
  };
}
