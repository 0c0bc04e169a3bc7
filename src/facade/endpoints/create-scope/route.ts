// POST /scope: the body validated against the spec's CreateScopeRequest, the caller allowed to
// create scopes in the application's namespace, and the scope made through the ScopeStore. The
// right is checked before the application's existence is told, so that a caller without it
// gets the same 403 for an application that exists and for one that does not.
import type { FastifyInstance } from 'fastify';
import { CreateScopeRequest, describeIssues } from '../../../api/index.js';
import { FacadeError } from '../../errors.js';
import { allow, authenticated } from '../access.js';
import type { EndpointDeps } from '../endpoint.js';

export function createScopeRoute(app: FastifyInstance, deps: EndpointDeps): void {
  app.post('/scope', authenticated(deps.auth), async (request) => {
    const parsed = CreateScopeRequest.safeParse(request.body);
    if (!parsed.success) throw new FacadeError('VALIDATION_FAILED', describeIssues(parsed.error));
    const applicationId = parsed.data.application_id;
    const namespace = deps.scopes.applicationNamespace(applicationId);
    // Without an application there is no namespace: the right asked is then the right in every
    // namespace (a SubjectAccessReview without one), which only a caller who could create a
    // scope of any application holds; the refusal names the application, never the namespace.
    await allow(
      deps.auth,
      request,
      { operation: 'scopes:create', ...(namespace !== undefined ? { namespace } : {}) },
      `for application ${applicationId}`,
    );
    if (namespace === undefined) {
      throw new FacadeError('APPLICATION_NOT_FOUND', `application ${applicationId} does not exist`);
    }
    return deps.scopes.create(parsed.data);
  });
}
