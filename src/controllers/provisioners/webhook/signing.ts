// How calls of the `webhook` provisioner are signed, and how a provider checks them (ADR 0005):
// HMAC-SHA256 over `<timestamp>.<raw body>`, keyed by the specification's signing Secret, so a
// receiver can refuse replays. verifySignature is the reference a provider implements.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-nrn-signature';
export const TIMESTAMP_HEADER = 'x-nrn-timestamp';
/** The key of the signing Secret that holds the HMAC key. */
export const SIGNING_KEY = 'key';
/** How old a signed timestamp a receiver should still accept. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/** `sha256=<hex>` of HMAC-SHA256(key, `<timestamp>.<body>`). */
export function sign(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * What a provider does with a call: recompute the signature over the raw body and refuse
 * timestamps outside the tolerance (a captured call replayed later fails here).
 */
export function verifySignature(
  key: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: string,
  now: Date = new Date(),
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  if (timestamp === undefined || signature === undefined || !/^[0-9]+$/.test(timestamp)) {
    return false;
  }
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(key, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
