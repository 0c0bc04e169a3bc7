// GET /status/tree, the status page's tree: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { statusTreeOperation } from './openapi.js';
import { statusTreeRoute } from './route.js';

export const statusTree: Endpoint = { route: statusTreeRoute, openApi: statusTreeOperation };
