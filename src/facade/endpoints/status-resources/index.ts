// GET /status/resources, the status page's list: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { statusResourcesOperation } from './openapi.js';
import { statusResourcesRoute } from './route.js';

export const statusResources: Endpoint = {
  route: statusResourcesRoute,
  openApi: statusResourcesOperation,
};
