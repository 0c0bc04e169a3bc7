// The `kubectl nrn` command line: its three commands, their flags (kubectl's own connection
// flags among them, since kubectl hands a plugin every argument unparsed), the help, and the
// strict parse that names the one wrong flag or argument.
import { parseArgs } from 'node:util';

export const OUTPUTS = ['table', 'wide', 'json', 'yaml'] as const;
export type Output = (typeof OUTPUTS)[number];

/** How to reach the cluster and which namespaces to read: kubectl's flags, kubectl's meaning. */
export interface Connection {
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  /** Undefined: the context's namespace, else `default`, as kubectl takes it. */
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
}

export type PluginInvocation =
  | { readonly command: 'tree'; readonly connection: Connection; readonly nrn: string | undefined }
  | {
      readonly command: 'why';
      readonly connection: Connection;
      /** As typed (`scope/x`); resolved against the kinds by the caller. */
      readonly kind: string;
      readonly name: string;
    }
  | {
      readonly command: 'scopes';
      readonly connection: Connection;
      readonly app: number;
      readonly output: Output;
    };

export type PluginOutcome =
  | { readonly outcome: 'invoke'; readonly invocation: PluginInvocation }
  | { readonly outcome: 'print'; readonly text: string }
  /** One line for stderr; the process exits 1. */
  | { readonly outcome: 'refuse'; readonly text: string };

type CommandName = PluginInvocation['command'];

interface FlagSpec {
  readonly short?: string;
  /** Undefined: a boolean flag. */
  readonly value?: string;
  readonly help: string;
}

const CONNECTION_FLAGS: Record<string, FlagSpec> = {
  kubeconfig: {
    value: 'FILE',
    help: 'the kubeconfig to use (default: KUBECONFIG, ~/.kube/config)',
  },
  context: { value: 'NAME', help: 'the kubeconfig context to use (default: its current one)' },
  namespace: {
    short: 'n',
    value: 'NS',
    help: "the namespace to read (default: the context's, else default)",
  },
  'all-namespaces': { short: 'A', help: 'read every namespace' },
};

interface CommandSpec {
  readonly usage: string;
  readonly summary: string;
  readonly flags: Record<string, FlagSpec>;
  readonly more: readonly string[];
}

const COMMANDS: Record<CommandName, CommandSpec> = {
  tree: {
    usage: 'kubectl nrn tree [NRN] [options]',
    summary:
      'draw organization > account > namespace > application with each scope and service, its status, counts per node and the reasons of failures; an NRN (prefix) narrows it',
    flags: CONNECTION_FLAGS,
    more: ['Example: kubectl nrn tree organization=1:account=2 -A'],
  },
  why: {
    usage: 'kubectl nrn why <kind>/<name> [options]',
    summary:
      'explain why a resource is not active: its status, the conditions that say why, its last Events, its children that are not ready, what the operator waits for and how to retry',
    flags: CONNECTION_FLAGS,
    more: [
      'Kinds: scope, service, application, servicespecification, scopeclass (plurals and short names too: nscope, nsvc, napp, nspec, nsc).',
      'Example: kubectl nrn why scope/web -n team-a',
    ],
  },
  scopes: {
    usage: 'kubectl nrn scopes --app ID [options]',
    summary: "list an application's scopes: NAME, ID, TYPE, STATUS, CLASS, AGE, REASON",
    flags: {
      app: { value: 'ID', help: "the application's id (required)" },
      output: { short: 'o', value: 'FORMAT', help: 'json, yaml or wide (default: a table)' },
      ...CONNECTION_FLAGS,
    },
    more: ['Example: kubectl nrn scopes --app 12 -o wide'],
  },
};

export function globalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length)) + 2;
  return [
    'Usage: kubectl nrn <command> [options]',
    '',
    "Watch the platform's scopes and services from the cluster (the API server only).",
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}${spec.summary}`),
    '',
    "kubectl nrn <command> --help prints the command's flags.",
    '',
  ].join('\n');
}

export function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  const names = Object.entries(spec.flags).map(
    ([name, flag]) =>
      `${flag.short !== undefined ? `-${flag.short}, ` : '    '}--${name}${flag.value !== undefined ? ` ${flag.value}` : ''}`,
  );
  const width = Math.max(...names.map((n) => n.length)) + 2;
  return [
    `Usage: ${spec.usage}`,
    '',
    `${spec.summary[0]?.toUpperCase()}${spec.summary.slice(1)}.`,
    '',
    'Options:',
    ...Object.values(spec.flags).map(
      (flag, i) => `  ${(names[i] ?? '').padEnd(width)}${flag.help}`,
    ),
    `  ${'-h, --help'.padEnd(width)}print this help`,
    '',
    ...spec.more,
    '',
  ].join('\n');
}

const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name);

function refuse(command: CommandName | undefined, problem: string): PluginOutcome {
  const who = command === undefined ? 'kubectl nrn' : `kubectl nrn ${command}`;
  const help = command === undefined ? 'kubectl nrn --help' : `kubectl nrn ${command} --help`;
  return { outcome: 'refuse', text: `${who}: ${problem} (see ${help})\n` };
}

/** Longest argument taken: an NRN, a name or a path is far shorter; more is a mistake. */
const MAX_ARGUMENT = 1024;
/** kubectl's namespace and object names are DNS names. */
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function parsePluginArgs(argv: readonly string[]): PluginOutcome {
  const [first, ...rest] = argv;
  if (first === undefined) return refuse(undefined, 'no command given');
  if (first === '--help' || first === '-h' || first === 'help') {
    const asked = rest[0];
    return {
      outcome: 'print',
      text: asked !== undefined && isCommand(asked) ? commandHelp(asked) : globalHelp(),
    };
  }
  if (first.startsWith('-'))
    return refuse(undefined, `${first} before the command; flags go after it`);
  if (!isCommand(first)) return refuse(undefined, `unknown command "${first.slice(0, 80)}"`);
  const command = first;
  const specs = COMMANDS[command].flags;
  const byShort = new Map(
    Object.entries(specs).flatMap(([name, f]) => (f.short !== undefined ? [[f.short, name]] : [])),
  );
  const { tokens } = parseArgs({
    args: [...rest],
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(
        Object.entries(specs).map(([name, f]) => [
          name,
          {
            type: f.value === undefined ? ('boolean' as const) : ('string' as const),
            ...(f.short !== undefined ? { short: f.short } : {}),
          },
        ]),
      ),
    },
  });
  const given: Record<string, string | true> = {};
  const positionals: string[] = [];
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (token.value.length > MAX_ARGUMENT) return refuse(command, 'an argument is too long');
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    if (token.name === 'help') {
      help = true;
      continue;
    }
    const name = byShort.get(token.name) ?? token.name;
    const spec = specs[name];
    if (spec === undefined) return refuse(command, `unknown flag ${token.rawName.slice(0, 80)}`);
    if (spec.value === undefined) {
      if (token.inlineValue) return refuse(command, `${token.rawName} takes no value`);
      given[name] = true;
    } else if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      return refuse(command, `${token.rawName} needs a value (${spec.value})`);
    } else if (token.value === '' || token.value.length > MAX_ARGUMENT) {
      return refuse(command, `${token.rawName}: not a ${spec.value}`);
    } else if (given[name] !== undefined) {
      return refuse(command, `${token.rawName} given twice`);
    } else {
      given[name] = token.value;
    }
  }
  if (help) return { outcome: 'print', text: commandHelp(command) };
  const str = (name: string) => (typeof given[name] === 'string' ? given[name] : undefined);
  const namespace = str('namespace');
  if (namespace !== undefined && !NAME.test(namespace)) {
    return refuse(command, `--namespace ${JSON.stringify(namespace)}: not a namespace name`);
  }
  if (namespace !== undefined && given['all-namespaces'] === true) {
    return refuse(command, '--namespace and --all-namespaces exclude each other');
  }
  const connection: Connection = {
    kubeconfig: str('kubeconfig'),
    context: str('context'),
    namespace,
    allNamespaces: given['all-namespaces'] === true,
  };
  switch (command) {
    case 'tree': {
      if (positionals.length > 1) return refuse(command, `unexpected argument "${positionals[1]}"`);
      return { outcome: 'invoke', invocation: { command, connection, nrn: positionals[0] } };
    }
    case 'why': {
      const [target, extra] = positionals;
      if (target === undefined)
        return refuse(command, 'no resource given: name one as <kind>/<name>');
      if (extra !== undefined) return refuse(command, `unexpected argument "${extra}"`);
      const slash = target.indexOf('/');
      const kind = target.slice(0, slash);
      const name = target.slice(slash + 1);
      if (slash <= 0 || !NAME.test(name)) {
        return refuse(command, `"${target}" is not <kind>/<name> (scope/web, service/db)`);
      }
      return { outcome: 'invoke', invocation: { command, connection, kind, name } };
    }
    case 'scopes': {
      if (positionals.length > 0) return refuse(command, `unexpected argument "${positionals[0]}"`);
      const app = str('app');
      if (app === undefined) return refuse(command, '--app ID is required');
      if (!/^[1-9][0-9]{0,15}$/.test(app) || !Number.isSafeInteger(Number(app))) {
        return refuse(command, `--app ${JSON.stringify(app)}: not an application id`);
      }
      const o = str('output') ?? 'table';
      if (!(OUTPUTS as readonly string[]).includes(o) || o === 'table') {
        if (str('output') !== undefined) {
          return refuse(command, `--output ${JSON.stringify(o)}: not one of json, yaml, wide`);
        }
      }
      return {
        outcome: 'invoke',
        invocation: { command, connection, app: Number(app), output: o as Output },
      };
    }
  }
}
