// schemas.json (src/local/builtin-schemas/) is what scripts/generate-builtin-schemas.ts makes of
// the installed @kubernetes/client-node: a dependency update that changes the official schemas
// fails here until the file is generated again.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

describe('builtin-schemas/schemas.json', () => {
  it('is what the generator writes today', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/generate-builtin-schemas.ts'), '--check'],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
