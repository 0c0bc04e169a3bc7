// fetch that trusts the local control plane's CA (it serves HTTPS with its own CA).
import { Agent, fetch as undiciFetch } from 'undici';

export type Fetch = typeof undiciFetch;

export function fetchTrusting(ca: string): Fetch {
  const dispatcher = new Agent({ connect: { ca } });
  return ((input, init) => undiciFetch(input, { ...init, dispatcher })) as Fetch;
}
