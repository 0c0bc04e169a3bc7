// The admission.k8s.io/v1 AdmissionReview as the operator's webhook reads and answers it
// (kubernetes staging/src/k8s.io/api/admission/v1/types.go): the request's fields a rule
// needs, checked, and the response: `uid` echoed, `allowed`, and on a refusal a Status.
import { z } from 'zod';

export const REVIEW_API_VERSION = 'admission.k8s.io/v1';

const Json = z.record(z.string(), z.unknown());

/** types.go AdmissionRequest: only what the rules read; the rest is left as sent. */
const AdmissionRequest = z.object({
  uid: z.string().min(1),
  kind: z.object({ group: z.string(), version: z.string(), kind: z.string() }),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  name: z.string().optional(),
  namespace: z.string().optional(),
  object: Json.nullish(),
  oldObject: Json.nullish(),
  dryRun: z.boolean().optional(),
  /**
   * types.go UserInfo of who made the request: a ScopeClass's author, whose rights the class
   * may not exceed. One the schema does not read is left out, not a malformed review: the
   * rules that need it refuse without it, the others do not care.
   */
  userInfo: z
    .object({
      username: z.string(),
      uid: z.string().optional(),
      groups: z.array(z.string()).optional(),
      extra: z.record(z.string(), z.array(z.string())).optional(),
    })
    .optional()
    .catch(undefined),
});

const AdmissionReview = z.object({
  apiVersion: z.literal(REVIEW_API_VERSION),
  kind: z.literal('AdmissionReview'),
  request: AdmissionRequest,
});

export type AdmissionRequest = z.infer<typeof AdmissionRequest>;

/** The object under review, with the metadata the rules read. */
export interface ReviewedObject {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly creationTimestamp?: string;
    readonly deletionTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** A rule's answer: admitted (perhaps with warnings), or refused naming the field. */
export type Verdict =
  | { readonly allowed: true; readonly warnings?: readonly string[] }
  | { readonly allowed: false; readonly reason: string; readonly message: string };

export const ADMIT: Verdict = { allowed: true };

export function refuse(reason: string, message: string): Verdict {
  return { allowed: false, reason, message };
}

/** The review, or why it is not one (for the 400 and the log line). */
export function parseReview(
  body: unknown,
): { readonly request: AdmissionRequest } | { readonly problem: string } {
  const parsed = AdmissionReview.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` };
  }
  return { request: parsed.data.request };
}

/** The object of a request as the rules read it; undefined when it has no usable metadata. */
export function objectOf(value: unknown): ReviewedObject | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const metadata = (value as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  if (typeof (metadata as { name?: unknown }).name !== 'string') return undefined;
  return value as ReviewedObject;
}

/**
 * The AdmissionReview answering `uid`. A refusal's Status is 403 Forbidden, as
 * controller-runtime's admission.Denied answers (pkg/webhook/admission/response.go) and the
 * webhook docs' example does; kube-apiserver passes code, reason and message on to the client
 * as the request's error, the message prefixed `admission webhook "<name>" denied the request: `
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go).
 */
export function answer(uid: string, verdict: Verdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (verdict.allowed) {
    if (verdict.warnings !== undefined && verdict.warnings.length > 0) {
      response.warnings = verdict.warnings;
    }
  } else {
    response.status = {
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: verdict.message,
    };
  }
  return { apiVersion: REVIEW_API_VERSION, kind: 'AdmissionReview', response };
}
