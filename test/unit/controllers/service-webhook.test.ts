// The webhook provisioner's pure parts: signing and verification (timestamp in the signed
// string, replays refused), the payload it sends, and how a provider's answer becomes progress.
import { describe, expect, it } from 'vitest';
import type { ServiceTarget } from '../../../src/controllers/provisioners/service-provisioner.js';
import {
  interpret,
  retryAfter,
  sign,
  verifySignature,
  webhookPayload,
} from '../../../src/controllers/provisioners/webhook/index.js';

const now = new Date('2025-06-01T12:00:00Z');
const ts = String(Math.floor(now.getTime() / 1000));
const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('webhook signing', () => {
  it('is HMAC-SHA256 over "<timestamp>.<body>", hex, with a sha256= prefix', () => {
    // Reference value: printf '1748779200.{"a":1}' | openssl dgst -sha256 -hmac k
    expect(sign('k', '1748779200', '{"a":1}')).toBe(
      'sha256=765b9f5e7542d558202454302a5afca70c9cd299ded6cc3e4477df0a77238929',
    );
    expect(sign('k', '1', 'x')).not.toBe(sign('k', '2', 'x'));
    expect(sign('k', '1', 'x')).not.toBe(sign('other', '1', 'x'));
  });

  it('verifies a fresh signature, and refuses a changed body, key, or an old timestamp', () => {
    const body = '{"action":"create"}';
    const signature = sign('key-1', ts, body);
    expect(verifySignature('key-1', ts, signature, body, now)).toBe(true);
    expect(verifySignature('key-1', ts, signature, `${body} `, now)).toBe(false);
    expect(verifySignature('key-2', ts, signature, body, now)).toBe(false);
    const later = new Date(now.getTime() + 301_000);
    expect(verifySignature('key-1', ts, signature, body, later)).toBe(false);
    expect(verifySignature('key-1', undefined, signature, body, now)).toBe(false);
    expect(verifySignature('key-1', ts, 'sha256=00', body, now)).toBe(false);
  });
});

describe('webhook payload', () => {
  it('carries metadata, the spec without its secret reference, and all attributes', () => {
    const target: ServiceTarget = {
      key: 'ns/db',
      namespace: 'ns',
      name: 'db',
      uid: 'u-1',
      generation: 2,
      spec: {
        name: 'db',
        type: 'dependency',
        specification_id: '6f1c7c1e-8d4e-4f63-9d5a-1b2c3d4e5f60',
        entity_nrn: 'organization=1',
        attributes: { host: 'h' },
        secret_attributes_ref: { name: 'creds' },
      },
      attributes: { host: 'h', password: 'p' },
      action: 'update',
    };
    const payload = webhookPayload(target);
    expect(payload).toEqual({
      action: 'update',
      metadata: { name: 'db', namespace: 'ns', uid: 'u-1', generation: 2 },
      spec: {
        name: 'db',
        type: 'dependency',
        specification_id: '6f1c7c1e-8d4e-4f63-9d5a-1b2c3d4e5f60',
        entity_nrn: 'organization=1',
      },
      attributes: { host: 'h', password: 'p' },
    });
  });
});

describe('webhook answers', () => {
  it('active is ready with output attributes', () => {
    expect(
      interpret(answer(200, { status: 'active', attributes: { endpoint: 'x' } }), 'create', now),
    ).toEqual({ state: 'ready', outputs: { endpoint: 'x' } });
  });

  it('creating is in progress, with Retry-After in seconds or as a date', () => {
    expect(
      interpret(answer(202, { status: 'creating' }, { 'retry-after': '2' }), 'create', now),
    ).toMatchObject({ state: 'in_progress', retryAfterMs: 2000 });
    expect(retryAfter(new Date(now.getTime() + 5000).toUTCString(), now)).toBe(5000);
    expect(retryAfter('soon', now)).toBeUndefined();
  });

  it('failed carries the provider messages', () => {
    expect(
      interpret(answer(200, { status: 'failed', messages: ['quota exceeded'] }), 'create', now),
    ).toEqual({
      state: 'failed',
      reason: 'ProvisionFailed',
      messages: [{ level: 'error', message: 'quota exceeded' }],
    });
  });

  it('a 4xx is a refusal with the provider message; 408, 429 and 5xx are retried', () => {
    expect(interpret(answer(422, { message: 'plan not offered' }), 'create', now)).toEqual({
      state: 'failed',
      reason: 'ProvisionRefused',
      messages: [{ level: 'error', message: 'plan not offered' }],
    });
    expect(interpret(answer(400, 'bad plan'), 'create', now)).toMatchObject({
      messages: [{ message: 'bad plan' }],
    });
    expect(interpret(answer(503, '', { 'retry-after': '1' }), 'create', now)).toMatchObject({
      state: 'unavailable',
      retryAfterMs: 1000,
    });
    expect(interpret(answer(429, ''), 'update', now).state).toBe('unavailable');
    expect(interpret(answer(302, ''), 'update', now).state).toBe('unavailable');
  });

  it('an invalid 2xx body is retried, not trusted', () => {
    expect(interpret(answer(200, { status: 'great' }), 'create', now).state).toBe('unavailable');
    expect(interpret(answer(200, 'ok'), 'create', now).state).toBe('unavailable');
  });

  it('delete: 404, 410, an empty 2xx and deleted are done', () => {
    expect(interpret(answer(404, ''), 'delete', now).state).toBe('ready');
    expect(interpret(answer(410, ''), 'delete', now).state).toBe('ready');
    expect(interpret(answer(204, ''), 'delete', now).state).toBe('ready');
    expect(interpret(answer(200, { status: 'deleted' }), 'delete', now).state).toBe('ready');
    expect(interpret(answer(200, { status: 'deleting' }), 'delete', now).state).toBe('in_progress');
  });
});
