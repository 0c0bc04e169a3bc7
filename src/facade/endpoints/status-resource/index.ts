// GET /status/resources/{kind}/{namespace}/{name}, the status page's detail view: its route and
// its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { statusResourceOperation } from './openapi.js';
import { statusResourceRoute } from './route.js';

export const statusResource: Endpoint = {
  route: statusResourceRoute,
  openApi: statusResourceOperation,
};
