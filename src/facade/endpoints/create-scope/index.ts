// POST /scope, the spec's create scope: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { createScopeOperation } from './openapi.js';
import { createScopeRoute } from './route.js';

export const createScope: Endpoint = { route: createScopeRoute, openApi: createScopeOperation };
