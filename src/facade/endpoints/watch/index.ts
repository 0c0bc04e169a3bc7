// GET /watch, the status page's live stream: its route and its operation in /openapi.json.
import type { Endpoint } from '../endpoint.js';
import { watchOperation } from './openapi.js';
import { watchRoute } from './route.js';

export const watch: Endpoint = { route: watchRoute, openApi: watchOperation };
