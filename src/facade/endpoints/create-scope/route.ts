// POST /scope: the body validated against the spec's CreateScopeRequest, the caller allowed to
// create scopes in the application's namespace, and the scope made through the ScopeStore.
import type { FastifyInstance } from 'fastify';
import { CreateScopeRequest, describeIssues } from '../../../api/index.js';
import { FacadeError } from '../../errors.js';
import { allow, authenticated } from '../access.js';
import type { EndpointDeps } from '../endpoint.js';

export function createScopeRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.post('/scope', authenticated(deps.auth), async (request) => {
    const parsed = CreateScopeRequest.safeParse(request.body);
    if (!parsed.success) throw new FacadeError('VALIDATION_FAILED', describeIssues(parsed.error));
    const namespace = deps.scopes.applicationNamespace(parsed.data.application_id);
    await allow(deps.auth, request, { operation: 'scopes:create', namespace });
    return deps.scopes.create(parsed.data);
  });
}
