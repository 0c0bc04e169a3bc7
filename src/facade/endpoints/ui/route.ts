// GET /ui and GET /ui/{asset}: the status page's static files, without auth (they hold no data;
// every data call the page makes carries the token), with the headers that let a browser run it
// and nothing else: a strict CSP (no inline script or style, data only from this origin), no
// MIME sniffing, no referrer, and revalidation by ETag so an upgrade is seen on the next load.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FacadeError } from '../../errors.js';
import { ASSET_NAME, loadUiAssets, type UiAsset } from './assets.js';

export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const UI_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-cache',
  'content-security-policy': UI_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function uiRoute(app: FastifyInstance): void {
  // Per app, read once: the files do not change under a running process.
  const assets = loadUiAssets();
  const send = (request: FastifyRequest, reply: FastifyReply, name: string) => {
    const asset: UiAsset | undefined = assets.get(name);
    if (asset === undefined) {
      throw new FacadeError('ROUTE_NOT_FOUND', `no route ${request.method} /ui/${name}`);
    }
    reply.headers(UI_HEADERS).header('etag', asset.etag);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.contentType).send(asset.body);
  };
  app.get('/ui', (request, reply) => send(request, reply, 'index.html'));
  app.get<{ Params: { asset: string } }>('/ui/:asset', (request, reply) => {
    const name = request.params.asset;
    // `/ui/` is the page too; its relative links resolve one level down, so send it to /ui.
    if (name === '') return reply.headers(UI_HEADERS).redirect('../ui', 301);
    if (!ASSET_NAME.test(name) || name === 'index.html') {
      throw new FacadeError('ROUTE_NOT_FOUND', `no route ${request.method} /ui/${name}`);
    }
    return send(request, reply, name);
  });
}
