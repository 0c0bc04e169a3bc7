// The status page's static files: read once from the repository's ui/ folder (the same four
// levels up from src/facade/endpoints/ui and from dist/facade/endpoints/ui, and shipped by
// package.json's `files`), each with its content type and ETag, so serving one is a map lookup
// and nothing a client sends reaches the file system.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the page, ready to send. */
export interface UiAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** A file name the page may have: no path, no dot file; longer than this is no asset of ours. */
export const ASSET_NAME = /^[a-z0-9][a-z0-9-]{0,62}\.[a-z]{2,4}$/;

/** The folder the page is served from. */
export const UI_DIR = fileURLToPath(new URL('../../../../ui/', import.meta.url));

/**
 * Every file of the page by name. A file of a type we do not serve, or a name outside
 * ASSET_NAME, is left out rather than guessed at. Missing folder: no page (the API still serves).
 */
export function loadUiAssets(dir: string = UI_DIR): ReadonlyMap<string, UiAsset> {
  const out = new Map<string, UiAsset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const contentType = TYPES[extname(name)];
    if (contentType === undefined || !ASSET_NAME.test(name)) continue;
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    out.set(name, { body, contentType, etag });
  }
  return out;
}
