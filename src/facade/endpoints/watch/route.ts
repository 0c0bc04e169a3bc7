// GET /watch: the status calls' changes as server-sent events, for as long as the client keeps
// the connection (streams.ts owns the stream; this route checks the request and admits it).
import type { FastifyInstance } from 'fastify';
import { StatusFilters, type StatusKind } from '../../../api/index.js';
import { callerOf, kindsOf, parseQuery } from '../../status/request.js';
import { resumeFrom, StreamHub } from '../../status/streams.js';
import { decide, OPERATION_OF } from '../../status/visibility.js';
import { authenticated } from '../access.js';
import type { EndpointDeps } from '../endpoint.js';

export function watchRoute(app: FastifyInstance, deps: EndpointDeps): void {
  const hub = new StreamHub(deps.status, deps.auth, deps.log, deps.streams);
  // An open stream would hold the server open on close.
  app.addHook('preClose', async () => hub.closeAll());
  app.get('/watch', authenticated(deps.auth), async (request, reply) => {
    const filters = parseQuery(StatusFilters, request.query);
    const caller = callerOf(request);
    const release = hub.admit(caller);
    try {
      // Cluster-wide once here: a caller allowed everywhere is never asked per namespace.
      const everywhere: Record<StatusKind, boolean> = { scope: false, service: false };
      for (const kind of kindsOf(filters)) {
        everywhere[kind] = await decide(deps.auth, caller, OPERATION_OF[kind]);
      }
      const header = request.headers['last-event-id'];
      const resume = resumeFrom(deps.status, typeof header === 'string' ? header : undefined);
      reply.hijack();
      hub.serve({ res: reply.raw, caller, filters, everywhere, resume, release });
    } catch (error) {
      release();
      throw error;
    }
  });
}
