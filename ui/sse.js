// GET /watch read with fetch() and a stream reader (EventSource cannot send an Authorization
// header), parsed as the WHATWG server-sent events format, reconnected after the server's
// `retry` with Last-Event-ID so the facade resumes where it left off (or answers `reset`).

const MAX_LINE = 1 << 20; // a line longer than any event the facade sends: the stream is cut

/**
 * Keeps one stream open until stop() is called. handlers: onEvent(type, data, id),
 * onState(state, detail) with state 'connecting' | 'live' | 'waiting' | 'unauthenticated' |
 * 'unavailable'.
 */
export function openStream({ url, token, onEvent, onState }) {
  let stopped = false;
  let lastEventId = '';
  let retryMs = 2000;
  let controller;
  let timer;

  const connect = async () => {
    if (stopped) return;
    controller = new AbortController();
    onState('connecting');
    const headers = { authorization: `Bearer ${token()}`, accept: 'text/event-stream' };
    if (lastEventId !== '') headers['last-event-id'] = lastEventId;
    let response;
    try {
      response = await fetch(url, { headers, cache: 'no-store', signal: controller.signal });
    } catch {
      return again();
    }
    if (response.status === 401) return onState('unauthenticated');
    if (response.status === 404) return onState('unavailable');
    if (!response.ok || response.body === null) {
      // 429 (too many streams) or 503: wait longer than a plain reconnect.
      return again(response.status === 429 ? retryMs * 5 : retryMs);
    }
    try {
      await read(response.body);
    } catch {
      // Cut off (network, a slow reader disconnected, stop()): reconnect below.
    }
    again();
  };

  const again = (delay = retryMs) => {
    if (stopped) return;
    onState('waiting', delay);
    timer = setTimeout(connect, delay);
  };

  const read = async (body) => {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let type = '';
    let data = [];
    let id;
    let live = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let start = 0;
      for (;;) {
        const end = buffer.indexOf('\n', start);
        if (end < 0) break;
        let line = buffer.slice(start, end);
        start = end + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (id !== undefined) lastEventId = id;
          if (data.length > 0) {
            const name = type === '' ? 'message' : type;
            // Live from the first event: a resumed stream need not start with `ready`.
            if (!live) onState('live');
            live = true;
            onEvent(name, data.join('\n'), lastEventId);
          }
          type = '';
          data = [];
          id = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        if (field === 'event') type = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id' && !text.includes('\0')) id = text;
        else if (field === 'retry' && /^\d+$/.test(text)) retryMs = Math.min(Number(text), 60_000);
      }
      buffer = buffer.slice(start);
      if (buffer.length > MAX_LINE) throw new Error('event too long');
    }
  };

  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
    },
  };
}
