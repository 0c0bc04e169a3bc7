// GET /scope/{id}: one scope by its numeric id, through the ScopeStore, for a caller allowed to
// get scopes in its namespace.
import type { FastifyInstance } from 'fastify';
import { FacadeError } from '../../errors.js';
import { allow, authenticated } from '../access.js';
import type { EndpointDeps } from '../endpoint.js';

export function getScopeRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.get<{ Params: { id: string } }>('/scope/:id', authenticated(deps.auth), async (request) => {
    const id = request.params.id;
    if (!/^[0-9]{1,15}$/.test(id)) {
      throw new FacadeError('VALIDATION_FAILED', 'id: must be a non-negative integer');
    }
    const found = await deps.scopes.get(Number(id));
    await allow(deps.auth, request, {
      operation: 'scopes:get',
      ...(found !== undefined ? { namespace: found.namespace } : {}),
    });
    if (found === undefined) throw new FacadeError('SCOPE_NOT_FOUND', `scope ${id} does not exist`);
    return found.scope;
  });
}
