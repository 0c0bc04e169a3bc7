// GET /scope/{id}, a scope by id: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { getScopeOperation } from './openapi.js';
import { getScopeRoute } from './route.js';

export const getScope: Endpoint = { route: getScopeRoute, openApi: getScopeOperation };
