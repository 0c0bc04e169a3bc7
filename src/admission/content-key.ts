// A key for what a review compiles, by its content: objects under review are not stored yet
// (refused, dry-run), so their uid and generation do not name one content.
import { createHash } from 'node:crypto';

export function contentKey(value: unknown): string {
  return `review:${createHash('sha256').update(JSON.stringify(value)).digest('base64url')}`;
}
