// The plugin's rules that a run through kubectl does not reach: colour only on a terminal
// without NO_COLOR, kubectl's AGE, and the parse of kubectl's own flag spellings.
import { describe, expect, it } from 'vitest';
import { parsePluginArgs } from '../../src/plugin/command-line.js';
import { age, painter, wantsColour } from '../../src/plugin/status.js';

describe('kubectl nrn', () => {
  it('colours only a terminal, and never with NO_COLOR set', () => {
    expect(wantsColour({ isTTY: true }, {})).toBe(true);
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    // An empty NO_COLOR is unset (no-color.org).
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(wantsColour({ isTTY: false }, {})).toBe(false);
    expect(wantsColour({}, {})).toBe(false);
    expect(painter(true)('failed', 'failed')).toBe('\u001b[31mfailed\u001b[0m');
    expect(painter(false)('failed', 'failed')).toBe('failed');
  });

  it('prints AGE as kubectl does', () => {
    const now = Date.parse('2026-01-10T00:00:00Z');
    const ago = (s: number) => new Date(now - s * 1000).toISOString();
    expect(age(ago(45), now)).toBe('45s');
    expect(age(ago(192), now)).toBe('3m12s');
    expect(age(ago(5 * 3600), now)).toBe('5h');
    expect(age(ago(51 * 3600), now)).toBe('2d3h');
    expect(age(ago(400 * 86400), now)).toBe('400d');
    expect(age(undefined, now)).toBe('<unknown>');
  });

  it("takes kubectl's spellings of its flags", () => {
    const parsed = parsePluginArgs(['scopes', '--app=7', '-oyaml', '-A', '--context', 'prod']);
    expect(parsed).toEqual({
      outcome: 'invoke',
      invocation: {
        command: 'scopes',
        app: 7,
        output: 'yaml',
        connection: {
          kubeconfig: undefined,
          context: 'prod',
          namespace: undefined,
          allNamespaces: true,
        },
      },
    });
    expect(parsePluginArgs(['tree', '-n', 'team-a', '-A'])).toEqual({
      outcome: 'refuse',
      text: 'kubectl nrn tree: --namespace and --all-namespaces exclude each other (see kubectl nrn tree --help)\n',
    });
    expect(parsePluginArgs(['scopes', '--app', '1', '-o', 'table'])).toMatchObject({
      outcome: 'refuse',
    });
    expect(parsePluginArgs(['tree', '-n'])).toEqual({
      outcome: 'refuse',
      text: 'kubectl nrn tree: -n needs a value (NS) (see kubectl nrn tree --help)\n',
    });
  });
});
