// The page's calls to the facade: the token (this tab's sessionStorage only, sent as a bearer
// token, never in a URL or a cookie) and the JSON data calls, each bounded in time. A 401 drops
// the token, so the page asks for it again.

const TOKEN_KEY = 'nrn-status-token';
const CALL_TIMEOUT_MS = 30_000;

export class Unauthenticated extends Error {}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** The query string of a filter set: only the filters that are set. */
export function query(filters, extra = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...filters, ...extra })) {
    if (value !== undefined && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** GET a data call (a path relative to the facade's root, which is /ui's parent). */
export async function getJson(path) {
  const value = token();
  if (value === null) throw new Unauthenticated('no token');
  const response = await fetch(new URL(path, facadeRoot()), {
    headers: { authorization: `Bearer ${value}`, accept: 'application/json' },
    cache: 'no-store',
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  if (response.status === 401) {
    forgetToken();
    throw new Unauthenticated('the token was refused');
  }
  const body = await response.json().catch(() => undefined);
  if (!response.ok) {
    const message = body?.message ?? `${response.status} ${response.statusText}`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return body;
}

/** Where the facade's routes are: the folder the page was served from. */
export function facadeRoot() {
  return new URL('./', location.href);
}
