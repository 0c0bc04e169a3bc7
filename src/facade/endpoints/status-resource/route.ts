// GET /status/resources/{kind}/{namespace}/{name}: one scope or service in detail — its summary,
// conditions, messages, a scope's children, and the last Events about it. Not found and not
// allowed answer alike (404), so a caller learns nothing of namespaces it may not see.
import type { FastifyInstance } from 'fastify';
import type { ResourceDetail, ScopeStatus, StatusKind } from '../../../api/index.js';
import { FacadeError } from '../../errors.js';
import { kubeFailure } from '../../kube-errors.js';
import { callerOf } from '../../status/request.js';
import { decide, OPERATION_OF } from '../../status/visibility.js';
import { authenticated } from '../access.js';
import { type EndpointDeps, JSON_TYPE } from '../endpoint.js';

const KIND_OF: Readonly<Record<StatusKind, string>> = { scope: 'Scope', service: 'Service' };
const MAX_PART = 253;

export function statusResourceRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.get<{ Params: { kind: string; namespace: string; name: string } }>(
    '/status/resources/:kind/:namespace/:name',
    authenticated(deps.auth),
    async (request, reply) => {
      const { kind, namespace, name } = request.params;
      if (kind !== 'scope' && kind !== 'service') {
        throw new FacadeError('BAD_REQUEST', 'kind: must be scope or service');
      }
      if (namespace.length > MAX_PART || name.length > MAX_PART) {
        throw new FacadeError('BAD_REQUEST', 'namespace and name: at most 253 characters');
      }
      const entry = deps.status.get(kind, namespace, name);
      const object = deps.status.object(kind, namespace, name);
      const allowed = await decide(deps.auth, callerOf(request), OPERATION_OF[kind], namespace);
      if (!allowed || entry === undefined || object === undefined) {
        throw new FacadeError('NOT_FOUND', `${kind} ${namespace}/${name} not found`);
      }
      let events: ResourceDetail['events'];
      try {
        events = await deps.readEvents({
          kind: KIND_OF[kind],
          namespace,
          name,
          ...(object.metadata.uid !== undefined ? { uid: object.metadata.uid } : {}),
        });
      } catch (error) {
        throw kubeFailure(error, 'reading Events');
      }
      const status = object.status;
      const detail: ResourceDetail = {
        summary: entry.summary,
        conditions: (status?.conditions ?? []).map((c) => ({ ...c })),
        messages: status?.messages ?? [],
        children: ((status as ScopeStatus | undefined)?.inventory ?? []).map((c) => ({ ...c })),
        events,
      };
      return reply.type(JSON_TYPE).send(JSON.stringify(detail));
    },
  );
}
