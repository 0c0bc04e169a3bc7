// GET /service, the spec's list of services: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { listServicesOperation } from './openapi.js';
import { listServicesRoute } from './route.js';

export const listServices: Endpoint = { route: listServicesRoute, openApi: listServicesOperation };
