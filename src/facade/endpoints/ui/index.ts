// GET /ui and GET /ui/{asset}, the status page's files: their route and operations in
// /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { uiAssetOperation, uiPageOperation } from './openapi.js';
import { uiRoute } from './route.js';

// One route function serves both paths; the second endpoint only documents its path.
export const uiPage: Endpoint = { route: uiRoute, openApi: uiPageOperation };
export const uiAsset: Endpoint = { route: () => {}, openApi: uiAssetOperation };
