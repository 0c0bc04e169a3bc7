// A server-sent events client for tests, as the status page reads GET /watch: fetch() with a
// bearer token and a stream reader (EventSource cannot send the header), the WHATWG parsing of
// `id:`, `event:`, `data:` and comment lines, and a wait for the next event that matches.
export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export interface OpenedStream {
  readonly status: number;
  readonly headers: Headers;
  /** The body as text when the answer is not a stream (an error). */
  readonly text?: string;
  readonly events: SseEvent[];
  readonly comments: string[];
  readonly retry: number | undefined;
  /** True once the server ended the stream. */
  ended(): boolean;
  /** The next event (from where the last call left off) that `match` accepts. */
  next(match?: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export async function openStream(
  url: string,
  headers: Record<string, string>,
): Promise<OpenedStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let retry: number | undefined;
  let done = false;
  let cursor = 0;
  let wake: (() => void) | undefined;
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      events,
      comments,
      retry,
      ended: () => true,
      next: () => Promise.reject(new Error(`not a stream: ${response.status} ${text}`)),
      close: () => {},
    };
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let buffer = '';
    let id: string | undefined;
    let event = '';
    let data: string[] = [];
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(value, { stream: true });
        let newline = buffer.search(/\r\n|\r|\n/);
        while (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
          if (line === '') {
            if (data.length > 0 || event !== '') {
              events.push({ id, event: event || 'message', data: data.join('\n') });
            }
            event = '';
            data = [];
          } else if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const raw = colon < 0 ? '' : line.slice(colon + 1);
            const content = raw.startsWith(' ') ? raw.slice(1) : raw;
            if (field === 'id') id = content;
            else if (field === 'event') event = content;
            else if (field === 'data') data.push(content);
            else if (field === 'retry') retry = Number(content);
          }
          newline = buffer.search(/\r\n|\r|\n/);
        }
        wake?.();
      }
    } catch {
      // Aborted by close(), or cut by the server: either way, the stream is over.
    }
    done = true;
    wake?.();
  })();
  const stream: OpenedStream = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    get retry() {
      return retry;
    },
    ended: () => done,
    next: async (match = () => true, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (cursor < events.length) {
          const e = events[cursor++] as SseEvent;
          if (match(e)) return e;
        }
        if (done) throw new Error('the stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching event; saw ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
    close: () => abort.abort(),
  };
  return stream;
}
