// A webhook call in flight is abandoned with the reconcile's signal (leadership lost): the
// provider's connection is closed and the abort is thrown, not reported as a provider that
// is unavailable (which the reconciler would write into the service's status).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ProviderEndpoint,
  ServiceTarget,
} from '../../../src/controllers/provisioners/service-provisioner.js';
import { WebhookProvisioner } from '../../../src/controllers/provisioners/webhook/index.js';
import type { Kube } from '../../../src/kube/index.js';

/** A provider that takes the request and never answers; it records each request's close. */
const held: { request: IncomingMessage; closed: Promise<void> }[] = [];
let arrived: () => void = () => {};
const server = createServer((request) => {
  const closed = new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
  held.push({ request, closed });
  arrived();
});
let endpoint: ProviderEndpoint;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  endpoint = {
    url: `http://127.0.0.1:${port}/provision`,
    specification: 'ns/spec',
    namespace: 'ns',
    signingSecret: undefined,
  };
});
afterAll(async () => {
  for (const { request } of held) request.socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const target: ServiceTarget = {
  key: 'ns/db',
  namespace: 'ns',
  name: 'db',
  uid: 'u-1',
  generation: 1,
  spec: {
    name: 'db',
    type: 'dependency',
    specification_id: '6f1c7c1e-8d4e-4f63-9d5a-1b2c3d4e5f60',
    entity_nrn: 'organization=1',
  },
  attributes: {},
  action: 'create',
};

// Unsigned calls read no Secret: the provisioner never asks the client for anything.
const noClient = {
  resource: () => {
    throw new Error('an unsigned call reads nothing from the API');
  },
} as unknown as Pick<Kube, 'resource'>;

describe('webhook provisioner and the reconcile signal', () => {
  it('abandons the call in flight when the signal aborts, and throws the abort', async () => {
    // A deadline far past the test: only the signal can end this call.
    const provisioner = new WebhookProvisioner(noClient, { timeoutMs: 600_000 });
    const halted = new AbortController();
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const call = provisioner.ensure(target, endpoint, halted.signal);
    await reached;
    const reason = new Error('controller halted');
    halted.abort(reason);
    await expect(call).rejects.toBe(reason);
    // The provider sees the connection go.
    await held.at(-1)?.closed;
  });

  it('without an abort, a call that cannot get an answer is still the provider unavailable', async () => {
    const provisioner = new WebhookProvisioner(noClient, { timeoutMs: 200 });
    const progress = await provisioner.ensure(target, endpoint, new AbortController().signal);
    expect(progress).toEqual({ state: 'unavailable', message: 'provider unreachable: timed out' });
  });
});
