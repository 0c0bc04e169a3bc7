// The abuse scenario's wire: requests sent as given (paths with bad escapes, odd headers, raw
// bytes), every answer kept for the secret check, and the shapes a refusal must have — a
// Kubernetes Status from the API server, the spec's {statusCode, code, error, message} from
// the facade — with no stack trace in either.
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { Agent } from 'undici';
import { ErrorBody } from '../../../src/api/index.js';
import { ERROR_CODES } from '../../../src/facade/errors.js';

export interface Request {
  readonly method: string;
  /** Sent as it is: no normalisation, no escaping. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
}

export interface Answer {
  /** 0 when the server closed the connection without an answer. */
  readonly status: number;
  readonly contentType: string;
  /** The body; for a stream (a watch) only that it began. */
  readonly text: string;
  readonly streamed: boolean;
  /** What went wrong on the client's side when there is no status. */
  readonly failure?: string;
}

/** Every answer of one server, and how many of each status class it gave. */
export class Wire {
  readonly answers: { request: Request; answer: Answer; label: string }[] = [];
  readonly counts = new Map<string, number>();
  private readonly agent: Agent;

  constructor(
    readonly origin: string,
    ca?: string,
  ) {
    // Few connections: a refusal the server answers early (413) must not take a pool with it.
    this.agent = new Agent({
      connections: 8,
      ...(ca !== undefined ? { connect: { ca } } : {}),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  }

  /** Sends one request; `label` says who sent it (kept with the answer for later checks). */
  async send(request: Request, label = ''): Promise<Answer> {
    let answer: Answer;
    try {
      const response = await this.agent.request({
        origin: this.origin,
        path: request.path,
        method: request.method as 'GET',
        headers: { ...request.headers },
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      const contentType = String(response.headers['content-type'] ?? '');
      const streamed =
        response.headers['content-length'] === undefined &&
        response.headers['transfer-encoding'] === 'chunked';
      let text = '';
      if (streamed) {
        // A watch that was accepted: its first bytes are enough, it would run for minutes.
        response.body.on('error', () => {});
        response.body.destroy();
      } else {
        text = await response.body.text();
      }
      answer = { status: response.statusCode, contentType, text, streamed };
    } catch (error) {
      const e = error as { code?: string; message?: string };
      answer = {
        status: 0,
        contentType: '',
        text: '',
        streamed: false,
        failure: `${e.code ?? ''} ${e.message ?? String(error)}`,
      };
    }
    this.answers.push({ request, answer, label });
    const group =
      answer.status === 0
        ? 'closed'
        : specifiedServerAnswer(answer)
          ? 'specified'
          : `${Math.floor(answer.status / 100)}xx`;
    this.counts.set(group, (this.counts.get(group) ?? 0) + 1);
    return answer;
  }

  count(group: string): number {
    return this.counts.get(group) ?? 0;
  }

  get total(): number {
    return this.answers.length;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/**
 * Raw bytes on a fresh connection (TLS with this CA, or plain TCP): the status of the first
 * answer line, 0 when the server closed without one. Node's HTTP parser refuses most of these
 * itself, with a bare 400 and no body, as Go's net/http does in front of kube-apiserver.
 */
export function sendRaw(
  url: string,
  bytes: Uint8Array,
  ca?: string,
): Promise<{ status: number; received: string }> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    let socket: Socket;
    let received = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), received });
    };
    const options = { host: hostname, port: Number(port) };
    socket =
      protocol === 'https:'
        ? connectTls({ ...options, ca, servername: 'localhost' }, () => socket.end(bytes))
        : connectTcp(options, () => socket.end(bytes));
    // A request the parser is still waiting on (a header without its end) gets no answer: the
    // connection is ours to end.
    const timer = setTimeout(done, 3_000);
    socket.on('data', (chunk: Buffer) => {
      if (received.length < 4096) received += chunk.toString('latin1');
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}

/** A frame of a JavaScript stack trace, as an uncaught error's message would carry. */
const STACK_FRAME = /\bat (?:async )?[\w$.<>]* ?\(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+\)?/;

export function describe(request: Request, answer: Answer): string {
  const body =
    request.body === undefined
      ? ''
      : typeof request.body === 'string'
        ? request.body.slice(0, 300)
        : `<${request.body.length} bytes>`;
  return `${request.method} ${visible(request.path.slice(0, 300))} ${JSON.stringify(request.headers ?? {}).slice(0, 300)} ${body}\n  -> ${answer.status} ${answer.failure ?? ''} ${answer.text.slice(0, 500)}`;
}

/** Text with every byte outside printable ASCII written as \xNN: a C1 control prints as nothing. */
function visible(text: string): string {
  return text.replace(
    /[^\x20-\x7e]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** Throws unless the answer is a refusal (4XX) in the shape of a Kubernetes Status. */
export function expectStatusRefusal(request: Request, answer: Answer): void {
  const problem = statusProblem(request, answer, true);
  if (problem !== undefined) throw new Error(`${problem}: ${describe(request, answer)}`);
}

/** Throws unless the answer is a 2XX or a refusal in the shape of a Kubernetes Status. */
export function expectStatusAnswer(request: Request, answer: Answer): void {
  const problem = statusProblem(request, answer, false);
  if (problem !== undefined) throw new Error(`${problem}: ${describe(request, answer)}`);
}

/** A connection the server ended while the client was still sending. */
const RESET = /EPIPE|ECONNRESET|UND_ERR_SOCKET|other side closed/;

/**
 * Node's HTTP parser refuses a request target with bytes outside printable ASCII itself, with a
 * bare 400 and no body, before any of our code sees it, and ends the connection; Go's
 * net/http, in front of kube-apiserver, answers such a request line with a bare 400 as well.
 * A client still writing a large body then meets the end of the connection instead.
 */
function parserRefusal(request: Request, answer: Answer): boolean {
  if (!/[^\x21-\x7e]/.test(request.path)) return false;
  return (
    (answer.status === 400 && answer.text === '') ||
    (answer.status === 0 && RESET.test(answer.failure ?? ''))
  );
}

/**
 * The two 5XX answers kube-apiserver gives by design to what a client asks, which are no
 * failure of the server: a list at a resourceVersion it has not reached (the watch cache's 504
 * "Too large resource version") and a create that carries a resourceVersion (the etcd3 store's
 * 500, ADR 0003). The local control plane answers them as kube does.
 */
function specifiedServerAnswer(answer: Answer): boolean {
  if (answer.status !== 504 && answer.status !== 500) return false;
  let status: { message?: unknown; details?: { causes?: Array<{ reason?: unknown }> } };
  try {
    status = JSON.parse(answer.text) as typeof status;
  } catch {
    return false;
  }
  return answer.status === 504
    ? (status.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge')
    : status.message === 'resourceVersion should not be set on objects to be created';
}

function statusProblem(request: Request, answer: Answer, refused: boolean): string | undefined {
  if (parserRefusal(request, answer)) return undefined;
  if (answer.status === 0) return 'no answer';
  if (specifiedServerAnswer(answer))
    return refused ? `a ${answer.status} where a refusal was due` : undefined;
  if (answer.status >= 500) return `a ${answer.status}`;
  if (STACK_FRAME.test(answer.text)) return 'a stack trace in the answer';
  if (answer.status < 300) {
    if (refused) return `accepted (${answer.status}) where a refusal was due`;
    if (answer.streamed || answer.text === '') return undefined;
    return isJsonObject(answer.text) ? undefined : 'a 2XX that is not a JSON object';
  }
  if (answer.status < 400) return `a ${answer.status}`;
  if (!answer.contentType.startsWith('application/json')) {
    return `a ${answer.status} of type ${answer.contentType}`;
  }
  // An answer to HEAD has no body to judge.
  if (request.method === 'HEAD') return undefined;
  let status: Record<string, unknown>;
  try {
    status = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return 'a refusal that is not JSON';
  }
  const shaped =
    status.kind === 'Status' &&
    status.apiVersion === 'v1' &&
    status.status === 'Failure' &&
    status.code === answer.status &&
    typeof status.reason === 'string' &&
    typeof status.message === 'string' &&
    typeof status.metadata === 'object';
  return shaped ? undefined : 'a refusal that is not a Status';
}

/** Throws unless the answer is a refusal (4XX) in the spec's error shape. */
export function expectFacadeRefusal(request: Request, answer: Answer): void {
  const problem = facadeProblem(request, answer, true);
  if (problem !== undefined) throw new Error(`${problem}: ${describe(request, answer)}`);
}

/** Throws unless the answer is a 2XX JSON object or a refusal in the spec's error shape. */
export function expectFacadeAnswer(request: Request, answer: Answer): void {
  const problem = facadeProblem(request, answer, false);
  if (problem !== undefined) throw new Error(`${problem}: ${describe(request, answer)}`);
}

/** The facade's body limit (src/facade/app.ts DEFAULT_BODY_LIMIT). */
const FACADE_BODY_LIMIT = 256 * 1024;

/**
 * A body over the facade's limit is answered 413 at once and the connection closed, as Fastify
 * does (the client would send it all for nothing otherwise); a client still writing it sees the
 * connection end instead of the answer. The 413 itself is checked on a raw socket.
 */
function closedOverLimit(request: Request, answer: Answer): boolean {
  return (
    answer.status === 0 &&
    request.body !== undefined &&
    request.body.length > FACADE_BODY_LIMIT &&
    RESET.test(answer.failure ?? '')
  );
}

function facadeProblem(request: Request, answer: Answer, refused: boolean): string | undefined {
  if (closedOverLimit(request, answer)) return undefined;
  // The facade's answer to what the parser refuses is checked on a raw socket; a client still
  // writing its body may see only the connection end.
  if (answer.status === 0 && /[^\x21-\x7e]/.test(request.path) && RESET.test(answer.failure ?? ''))
    return undefined;
  if (answer.status === 0) return 'no answer';
  if (answer.status >= 500) return `a ${answer.status}`;
  if (STACK_FRAME.test(answer.text)) return 'a stack trace in the answer';
  if (answer.status < 300) {
    if (refused) return `accepted (${answer.status}) where a refusal was due`;
    if (request.method === 'HEAD' && answer.text === '') return undefined;
    return isJsonObject(answer.text) ? undefined : 'a 2XX that is not a JSON object';
  }
  if (answer.status < 400) return `a ${answer.status}`;
  if (request.method === 'HEAD') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'a refusal that is not JSON';
  }
  const parsed = ErrorBody.safeParse(body);
  if (!parsed.success) return 'a refusal not in the spec shape';
  const { statusCode, code } = parsed.data;
  const known = code !== undefined ? ERROR_CODES[code as keyof typeof ERROR_CODES] : undefined;
  if (statusCode !== answer.status || known?.statusCode !== answer.status) {
    return `a refusal whose statusCode/code (${statusCode}/${code}) is not its status`;
  }
  return undefined;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}
