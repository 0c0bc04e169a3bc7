// GET /ui and /ui/{asset} through buildFacade() and inject(): the page and its files served
// without a token, with the headers the contract asks (strict CSP, nosniff, no referrer,
// revalidated by ETag), nothing outside ui/ reachable, and every page file one the page links.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFacade } from '../../../src/facade/app.js';
import { StaticAuthenticator } from '../../../src/facade/auth.js';
import { ServiceCatalog } from '../../../src/facade/catalog/index.js';
import { loadUiAssets, UI_DIR } from '../../../src/facade/endpoints/ui/assets.js';
import type { ScopeStore } from '../../../src/facade/scopes.js';
import { silentLogger } from '../../../src/log.js';

let app: FastifyInstance;

beforeAll(async () => {
  app = buildFacade({
    log: silentLogger(),
    auth: new StaticAuthenticator({ tokens: [] }),
    catalog: new ServiceCatalog(),
    scopes: {} as ScopeStore,
    readSecret: async () => undefined,
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

const expectPageHeaders = (headers: Record<string, unknown>) => {
  const csp = String(headers['content-security-policy']);
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['cache-control']).toBe('no-cache');
};

describe('GET /ui', () => {
  it('serves the page without a token, with a strict CSP', async () => {
    const res = await app.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expectPageHeaders(res.headers);
    expect(res.body).toContain('<html lang="en">');
    // No inline script or style for the CSP to refuse.
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/);
  });

  it('serves each file the page links, as its type, and answers 304 to its ETag', async () => {
    const page = (await app.inject({ method: 'GET', url: '/ui' })).body;
    const linked = [...page.matchAll(/(?:src|href)="ui\/([^"]+)"/g)].map((m) => m[1]);
    expect(linked.sort()).toEqual(['app.js', 'icon.svg', 'style.css']);
    for (const [name, type] of [
      ['app.js', 'text/javascript; charset=utf-8'],
      ['api.js', 'text/javascript; charset=utf-8'],
      ['sse.js', 'text/javascript; charset=utf-8'],
      ['style.css', 'text/css; charset=utf-8'],
    ] as const) {
      const res = await app.inject({ method: 'GET', url: `/ui/${name}` });
      expect(res.statusCode, name).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expectPageHeaders(res.headers);
      expect(res.body).toBe(await readFile(join(UI_DIR, name), 'utf8'));
      const again = await app.inject({
        method: 'GET',
        url: `/ui/${name}`,
        headers: { 'if-none-match': String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
  });

  it('sends /ui/ to /ui, so the relative links resolve the same', async () => {
    const res = await app.inject({ method: 'GET', url: '/ui/' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('../ui');
  });

  it.each([
    '/ui/missing.js',
    '/ui/index.html',
    '/ui/..%2Fpackage.json',
    '/ui/%2e%2e%2fpackage.json',
    '/ui/.hidden.js',
    '/ui/app.js/x',
    `/ui/${'a'.repeat(80)}.js`,
  ])('%s is a 404 in the error shape', async (url) => {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'ROUTE_NOT_FOUND' });
  });

  it('loads only the files of the types it serves, under names it accepts', () => {
    const names = [...loadUiAssets().keys()].sort();
    expect(names).toEqual(['api.js', 'app.js', 'icon.svg', 'index.html', 'sse.js', 'style.css']);
    expect(loadUiAssets('/nonexistent-ui-dir').size).toBe(0);
  });
});
